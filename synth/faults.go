package synth

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Faults are impairments injected into a synthetic game, each for one
// client (1-based, as ClientAddr numbers them; client N is player N). The
// capture shows what the receiver got, as the real lossy capture does: a
// dropped datagram is absent, a delayed one is written when it was sent
// and reaches its receiver late.
type Faults struct {
	Outages []Outage // nothing to or from the client gets through
	Stops   []Stop   // the client sends nothing any more (it still receives)
	Mutes   []Mute   // the server sends the client nothing any more (it still receives)
	Bursts  []Burst  // short outages, again and again
	Delays  []Delay  // every datagram to and from the client arrives late
	Slow    []Slow   // the client runs below the server's 40 frames a second
	Forgets []Forget // the client loses the states it holds
	Losses  []Loss   // datagrams lost at random, one way or both, for a while
	Lates   []Late   // inputs that reach the server frames after their frame
}

// The directions of a Loss.
const (
	Both     = ""    // to and from the client
	ToServer = "c2s" // from the client to the server
	ToClient = "s2c" // from the server to the client
)

// Loss drops each datagram of Client going Dir (Both, ToServer or
// ToClient) with chance Rate, from From to To (To 0: to the game's end).
type Loss struct {
	Client   int
	Dir      string
	Rate     float64
	From, To time.Duration
}

// Late makes a Share of Client's inputs (cdat), from From to To (To 0: to
// the game's end), reach the server Frames frames (25 ms each) after the
// others.
type Late struct {
	Client   int
	Share    float64
	Frames   int
	From, To time.Duration
}

// within reports whether t is in [from, to), to 0 being open.
func within(t, from, to time.Duration) bool {
	return t >= from && (to == 0 || t < to)
}

// Outage drops every datagram to and from Client from From to To (game
// time since the server's start).
type Outage struct {
	Client   int
	From, To time.Duration
}

// Stop drops every datagram Client sends from At on.
type Stop struct {
	Client int
	At     time.Duration
}

// Mute drops every datagram the server sends to Client from At on: the
// server stops sending to it while the client keeps sending.
type Mute struct {
	Client int
	At     time.Duration
}

// Burst drops every datagram to and from Client for Length at the start of
// every period of Every, from From on.
type Burst struct {
	Client              int
	From, Every, Length time.Duration
}

// Delay makes every datagram to and from Client arrive Add later.
type Delay struct {
	Client int
	Add    time.Duration
}

// Slow makes Client run at FPS frames a second (and report it as its chase
// frame rate) from From on.
type Slow struct {
	Client int
	FPS    float64
	From   time.Duration
}

// Forget makes Client lose every state it holds at At, and again every
// Every after (0: once), as a client that reset its netgame state does: it
// cannot apply the next difs (their base is gone) and acknowledges frame 0,
// its acknowledged frame going back, until the server sends it a keyframe.
type Forget struct {
	Client    int
	At, Every time.Duration
}

// Validate reports whether the faults fit a game of players clients.
func (f *Faults) Validate(players int) error {
	check := func(kind string, c int) error {
		if c < 1 || c > players {
			return fmt.Errorf("%s: client %d is not one of the %d clients", kind, c, players)
		}
		return nil
	}
	for _, o := range f.Outages {
		if err := check("outage", o.Client); err != nil {
			return err
		}
		if o.To <= o.From || o.From < 0 {
			return fmt.Errorf("outage of client %d: %v to %v is not a window", o.Client, o.From, o.To)
		}
	}
	for _, s := range f.Stops {
		if err := check("stop", s.Client); err != nil {
			return err
		}
	}
	for _, m := range f.Mutes {
		if err := check("mute", m.Client); err != nil {
			return err
		}
		if m.At < 0 {
			return fmt.Errorf("mute of client %d: %v is before the start", m.Client, m.At)
		}
	}
	for _, b := range f.Bursts {
		if err := check("burst", b.Client); err != nil {
			return err
		}
		if b.Every <= 0 || b.Length <= 0 || b.Length >= b.Every {
			return fmt.Errorf("burst of client %d: %v every %v is not a burst", b.Client, b.Length, b.Every)
		}
	}
	for _, d := range f.Delays {
		if err := check("delay", d.Client); err != nil {
			return err
		}
		if d.Add < 0 || d.Add > 10*time.Second {
			return fmt.Errorf("delay of client %d: %v is not 0..10s", d.Client, d.Add)
		}
	}
	for _, s := range f.Slow {
		if err := check("slow", s.Client); err != nil {
			return err
		}
		if !(s.FPS >= 1 && s.FPS < 40) {
			return fmt.Errorf("slow client %d: %v fps is not 1..40", s.Client, s.FPS)
		}
	}
	for _, l := range f.Losses {
		if err := check("loss", l.Client); err != nil {
			return err
		}
		if !(l.Rate > 0 && l.Rate <= 1) || l.Dir != Both && l.Dir != ToServer && l.Dir != ToClient || l.From < 0 || l.To != 0 && l.To <= l.From {
			return fmt.Errorf("loss of client %d: %v %q from %v to %v is not a rate 0..1, a direction (c2s, s2c or both) and a window", l.Client, l.Rate, l.Dir, l.From, l.To)
		}
	}
	for _, l := range f.Lates {
		if err := check("late", l.Client); err != nil {
			return err
		}
		if !(l.Share > 0 && l.Share <= 1) || l.Frames < 1 || l.Frames > 400 || l.From < 0 || l.To != 0 && l.To <= l.From {
			return fmt.Errorf("late inputs of client %d: share %v, %d frames, from %v to %v is not a share 0..1, 1..400 frames and a window", l.Client, l.Share, l.Frames, l.From, l.To)
		}
	}
	for _, x := range f.Forgets {
		if err := check("forget", x.Client); err != nil {
			return err
		}
		if x.At < 0 || x.Every < 0 || x.Every > 0 && x.Every < time.Second {
			return fmt.Errorf("forget of client %d: at %v every %v is not at ≥ 0 every 0 or ≥ 1s", x.Client, x.At, x.Every)
		}
	}
	return nil
}

// empty reports whether no fault is injected.
func (f *Faults) empty() bool {
	return len(f.Outages)+len(f.Stops)+len(f.Mutes)+len(f.Bursts)+len(f.Delays)+len(f.Slow)+len(f.Forgets)+len(f.Losses)+len(f.Lates) == 0
}

// clientOf returns the client number of an endpoint, 0 for the server.
func clientOf(a netip.AddrPort) int {
	b := a.Addr().As4()
	if a.Addr().Is4() && b[0] == 10 && b[1] == 0 && b[2] == 0 && b[3] >= 2 {
		return int(b[3]) - 1
	}
	return 0
}

// drop reports whether the faults drop a datagram from → to sent at now
// (game time, ns), and which fault did; rng draws the random ones.
func (f *Faults) drop(from, to netip.AddrPort, now int64, rng *rand.Rand) (bool, string) {
	src, dst := clientOf(from), clientOf(to)
	t := time.Duration(now)
	for _, o := range f.Outages {
		if (o.Client == src || o.Client == dst) && t >= o.From && t < o.To {
			return true, "outage"
		}
	}
	for _, s := range f.Stops {
		if s.Client == src && t >= s.At {
			return true, "stop"
		}
	}
	for _, m := range f.Mutes {
		if src == 0 && m.Client == dst && t >= m.At {
			return true, "mute"
		}
	}
	for _, b := range f.Bursts {
		if (b.Client == src || b.Client == dst) && t >= b.From && (t-b.From)%b.Every < b.Length {
			return true, "burst"
		}
	}
	for _, l := range f.Losses {
		c2s, s2c := l.Client == src && dst == 0, src == 0 && l.Client == dst
		if (c2s && l.Dir != ToClient || s2c && l.Dir != ToServer) && within(t, l.From, l.To) && rng.Float64() < l.Rate {
			if c2s {
				return true, "loss-c2s"
			}
			return true, "loss-s2c"
		}
	}
	return false, ""
}

// lateDelay is how much later an input from from reaches the server when a
// Late fault makes it late, counted in the summary.
func (g *gen) lateDelay(from netip.AddrPort) int64 {
	c, t := clientOf(from), time.Duration(g.now)
	for _, l := range g.cfg.Faults.Lates {
		if l.Client == c && within(t, l.From, l.To) && g.faultRNG.Float64() < l.Share {
			g.sum.FaultDrops[fmt.Sprintf("late %d", c)]++
			return int64(l.Frames) * int64(time.Second) / 40
		}
	}
	return 0
}

// delay is the added delay of a datagram from → to.
func (f *Faults) delay(from, to netip.AddrPort) int64 {
	src, dst := clientOf(from), clientOf(to)
	var d time.Duration
	for _, x := range f.Delays {
		if x.Client == src || x.Client == dst {
			d += x.Add
		}
	}
	return int64(d)
}

// slowFPS is the frame rate of client n at now, 0 when it is not slow.
func (f *Faults) slowFPS(n int, now int64) float64 {
	for _, s := range f.Slow {
		if s.Client == n && time.Duration(now) >= s.From {
			return s.FPS
		}
	}
	return 0
}

// FaultTruth is what a fault did, as written beside the capture.
type FaultTruth struct {
	Kind    string  `json:"kind"` // outage, stop, mute, burst, delay, slow, forget, loss, late; dropped (what followed)
	Client  int     `json:"client"`
	Player  int     `json:"player"`
	Addr    string  `json:"addr"`
	From    float64 `json:"from_s"`         // game time since the server's start
	To      float64 `json:"to_s,omitempty"` // end of the window (outage; stop and others: the game's end)
	Start   string  `json:"start"`          // From as a capture time stamp (RFC 3339)
	End     string  `json:"end"`
	Every   float64 `json:"every_s,omitempty"`
	Length  float64 `json:"length_s,omitempty"`
	AddMs   float64 `json:"add_ms,omitempty"`
	FPS     float64 `json:"fps,omitempty"`
	Dropped int     `json:"dropped"` // datagrams this fault dropped
	// Times is how many times the client lost its states (forget).
	Times int `json:"times,omitempty"`
	// Loss: the direction (c2s, s2c, both), the chance of each datagram,
	// and the datagrams of each direction sent in the window (the
	// dropped ones are in Dropped, both ways).
	Dir     string  `json:"dir,omitempty"`
	Rate    float64 `json:"rate,omitempty"`
	DropC2S int     `json:"dropped_c2s,omitempty"`
	DropS2C int     `json:"dropped_s2c,omitempty"`
	// Late: the share of inputs made late, how many frames, and how many
	// inputs were.
	Share      float64 `json:"share,omitempty"`
	Frames     int     `json:"frames,omitempty"`
	LateInputs int     `json:"late_inputs,omitempty"`
	// Slow: the frames the client skipped (and reported so in the legacy
	// sdak).
	Skipped int `json:"frames_skipped,omitempty"`
	// Frame and SLSN: the server frame (and level sequence) at which the
	// server dropped the player (dropped).
	Frame int `json:"frame,omitempty"`
	SLSN  int `json:"slsn,omitempty"`
}

// FaultsPath is the file the injected faults are written to beside a
// capture: dir/name_faults.json for dir/name.ext.
func FaultsPath(capturePath string) string {
	dir, file := filepath.Split(capturePath)
	return filepath.Join(dir, strings.TrimSuffix(file, filepath.Ext(file))+"_faults.json")
}

// FaultTruths lists the faults of cfg with what they did in a run that
// produced sum.
func FaultTruths(cfg Config, sum *Summary) []FaultTruth {
	epoch := Epoch(cfg.Seed)
	ts := func(d time.Duration) string { return epoch.Add(d).Format(time.RFC3339Nano) }
	end := cfg.Duration
	mk := func(kind string, c int, from, to time.Duration) FaultTruth {
		return FaultTruth{Kind: kind, Client: c, Player: c, Addr: ClientAddr(c).String(), From: from.Seconds(), To: to.Seconds(),
			Start: ts(from), End: ts(to), Dropped: sum.FaultDrops[fmt.Sprintf("%s %d", kind, c)]}
	}
	var out []FaultTruth
	f := &cfg.Faults
	for _, o := range f.Outages {
		out = append(out, mk("outage", o.Client, o.From, min(o.To, end)))
	}
	for _, s := range f.Stops {
		out = append(out, mk("stop", s.Client, s.At, end))
	}
	for _, m := range f.Mutes {
		out = append(out, mk("mute", m.Client, m.At, end))
	}
	for _, b := range f.Bursts {
		t := mk("burst", b.Client, b.From, end)
		t.Every, t.Length = b.Every.Seconds(), b.Length.Seconds()
		out = append(out, t)
	}
	for _, d := range f.Delays {
		t := mk("delay", d.Client, 0, end)
		t.AddMs = float64(d.Add) / 1e6
		out = append(out, t)
	}
	for _, s := range f.Slow {
		t := mk("slow", s.Client, s.From, end)
		t.FPS, t.Skipped = s.FPS, sum.Skipped[s.Client]
		out = append(out, t)
	}
	for _, l := range f.Losses {
		to := l.To
		if to == 0 || to > end {
			to = end
		}
		t := mk("loss", l.Client, l.From, to)
		t.Dir, t.Rate = l.Dir, l.Rate
		if t.Dir == Both {
			t.Dir = "both"
		}
		t.DropC2S, t.DropS2C = sum.FaultDrops[fmt.Sprintf("loss-c2s %d", l.Client)], sum.FaultDrops[fmt.Sprintf("loss-s2c %d", l.Client)]
		t.Dropped = t.DropC2S + t.DropS2C
		out = append(out, t)
	}
	for _, l := range f.Lates {
		to := l.To
		if to == 0 || to > end {
			to = end
		}
		t := mk("late", l.Client, l.From, to)
		t.Share, t.Frames, t.LateInputs = l.Share, l.Frames, sum.FaultDrops[fmt.Sprintf("late %d", l.Client)]
		out = append(out, t)
	}
	for _, x := range f.Forgets {
		t := mk("forget", x.Client, x.At, end)
		t.Every, t.Times = x.Every.Seconds(), sum.Forgot[x.Client]
		out = append(out, t)
	}
	// What the faults led to: the modern server drops a client it got no
	// stak from for 100 frames.
	for _, d := range sum.Drops {
		at := time.Duration(d.At)
		t := mk("dropped", d.Player, at, at)
		t.Frame, t.SLSN = d.Frame, d.SLSN
		out = append(out, t)
	}
	return out
}

// WriteFaults writes the faults of a run beside the capture (FaultsPath),
// as a JSON array of FaultTruth.
func WriteFaults(capturePath string, cfg Config, sum *Summary) error {
	b, err := json.MarshalIndent(FaultTruths(cfg, sum), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(FaultsPath(capturePath), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the injected faults: %w", err)
	}
	return nil
}

// faultDrop drops a datagram when a fault says so, and counts it.
func (g *gen) faultDrop(from, to netip.AddrPort, name string) bool {
	drop, kind := g.cfg.Faults.drop(from, to, g.now, g.faultRNG)
	if !drop {
		return false
	}
	c := clientOf(from)
	if c == 0 {
		c = clientOf(to)
	}
	g.sum.FaultDrops[fmt.Sprintf("%s %d", kind, c)]++
	g.sum.Lost++
	g.sum.LostByName[name]++
	return true
}

// slowFPS is the client's frame rate when it is made slow, else 0.
func (c *client) slowFPS() float64 {
	if !c.g.faults {
		return 0
	}
	return c.g.cfg.Faults.slowFPS(c.n, c.g.now)
}

// forgetNow makes the client lose its states when a Forget says so.
func (c *client) forgetNow(now int64) {
	for _, x := range c.g.cfg.Faults.Forgets {
		if x.Client != c.n || time.Duration(now) < x.At {
			continue
		}
		due := x.At
		if x.Every > 0 {
			due += (time.Duration(now) - x.At) / x.Every * x.Every
		}
		if c.forgotAt == int64(due)+1 {
			continue // done for this time
		}
		c.forgotAt = int64(due) + 1
		c.held = c.held[:0]
		c.applied, c.lastApplied = false, 0
		c.g.sum.Forgot[c.n]++
	}
}

// slowSkip reports whether a slow client skips this frame: it runs FPS of
// every 40 frames, evenly.
func (c *client) slowSkip(now int64) bool {
	fps := c.g.cfg.Faults.slowFPS(c.n, now)
	if fps <= 0 {
		return false
	}
	c.slowAcc += fps / 40
	if c.slowAcc < 1 {
		// A frame the client does not show: the legacy client says so
		// in its next sdak.
		c.skipped++
		c.g.sum.Skipped[c.n]++
		return true
	}
	c.slowAcc--
	return false
}
