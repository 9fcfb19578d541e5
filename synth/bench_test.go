package synth_test

import (
	"io"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

// BenchmarkGenerate measures generation speed for full games of 7 clients.
// game-s/s is simulated game seconds per second of wall time: a one-hour
// modern capture of 7 clients takes 3600 / game-s/s seconds.
func BenchmarkGenerate(b *testing.B) {
	tests := []struct {
		name string
		cfg  synth.Config
	}{
		{"modern_7clients_60s", synth.Config{Era: decode.Modern, Players: 7, Duration: time.Minute, Loss: 0.01, Seed: 1}},
		{"legacy_7clients_60s", synth.Config{Era: decode.Legacy, Players: 7, Duration: time.Minute, Loss: 0.01, Seed: 1}},
		{"modern_2clients_60s", synth.Config{Era: decode.Modern, Players: 2, Duration: time.Minute, Seed: 1}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			var packets, bytes int64
			for b.Loop() {
				cw, err := synth.NewCaptureWriter(countWriter{&bytes}, synth.Pcap)
				if err != nil {
					b.Fatal(err)
				}
				sum, err := synth.Generate(tt.cfg, cw, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := cw.Flush(); err != nil {
					b.Fatal(err)
				}
				packets += int64(sum.Sent - sum.Lost)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)*tt.cfg.Duration.Seconds()/sec, "game-s/s")
			b.ReportMetric(float64(packets)/sec, "packets/s")
			b.SetBytes(bytes / int64(b.N))
		})
	}
}

type countWriter struct{ n *int64 }

func (w countWriter) Write(p []byte) (int, error) {
	*w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = countWriter{}
