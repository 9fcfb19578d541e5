package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
)

// writeHealth prints the health report: a summary line and a table per
// conversation, one row a second. A mean without samples is "-"; the
// columns are those of the conversation's sync model.
func writeHealth(w io.Writer, hc []*engine.ClientHealth) {
	for _, x := range hc {
		pl := "?"
		if x.Player != nil {
			pl = fmt.Sprint(*x.Player)
		}
		s := x.Summary
		v, _ := decode.ParseVersion(x.Era)
		fmt.Fprintf(w, "\nHealth of conversation %d, client %s (player %s, %s): %.1f inputs/s, %d late inputs, %.1f difs/s of %.0f B, %d base resets, %d incomplete, ack %s ms, pong-pang %s ms, chase %s fps, %d position jumps\n",
			x.Conv, x.Client, pl, v.Label(), s.InputsPerS, s.LateInputs, s.DifsPerS, s.MeanDifBytes, s.BaseResets, s.Incomplete,
			opt(s.MeanAckMs, "%.1f"), opt(s.MeanPongPangMs, "%.1f"), opt(s.MeanChaseFPS, "%.1f"), s.PositionJumps)
		// The columns of the version's sync model: the game-moves
		// versions report skipped frames and dif corrections, the rewind
		// versions pings and corrections of their own.
		legacy := v.Sync() == decode.GameMoves
		tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', tabwriter.AlignRight)
		if legacy {
			fmt.Fprintf(tw, "t\tinputs\tlate\tdifs\tdif B\tresets\tincompl\tacks\tack ms\tchase\tstdf late\tskipped\tdif corr\tmax step\tjumps\t\n")
		} else {
			fmt.Fprintf(tw, "t\tinputs\tlate\tdifs\tdif B\tresets\tincompl\tacks\tack ms\tping-pong ms\tpong-pang ms\tchase\tdsync ms\tlocal corr\tremote corr\tcpu\tmax step\tjumps\t\n")
		}
		for _, s := range x.Seconds {
			if legacy {
				fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", s.T, s.Inputs, s.LateInputs,
					s.Difs, s.DifBytes, s.BaseResets, s.Incomplete, s.Acks, opt(s.AckMs, "%.1f"), opt(s.ChaseFPS, "%.1f"),
					optInt(s.StdfLate), optInt(s.FramesSkipped), optInt(s.DifCorrections), opt(s.MaxStep, "%.1f"), s.Jumps)
				continue
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", s.T, s.Inputs, s.LateInputs,
				s.Difs, s.DifBytes, s.BaseResets, s.Incomplete, s.Acks, opt(s.AckMs, "%.1f"), opt(s.PingPongMs, "%.1f"),
				opt(s.PongPangMs, "%.1f"), opt(s.ChaseFPS, "%.1f"), opt(s.DsyncMs, "%.1f"), opt(s.LocalCorrection, "%.1f"),
				opt(s.RemoteCorrection, "%.1f"), opt(s.CPU, "%.0f"), opt(s.MaxStep, "%.1f"), s.Jumps)
		}
		tw.Flush()
	}
}

// opt formats a value that may have no sample: "-".
func opt(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

func optInt(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
