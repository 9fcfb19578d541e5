package report

import (
	"math"
	"sync"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/levelmap"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

// MaxPlayers is the most players a replay follows (the game has 8).
const MaxPlayers = 8

// Replay detail: every state of a capture up to FullDetail long is in the
// replay, with a snapshot of its things every SnapEvery; a longer capture
// keeps one state every ThinEvery per client, with a snapshot every
// ThinSnapEvery, and every state within FindingMargin of a finding (at most
// FindingSpan of each finding, the most severe first, up to
// MaxFindingDetail per client).
const (
	FullDetail       = 10 * time.Minute
	SnapEvery        = 500 * time.Millisecond
	ThinEvery        = 500 * time.Millisecond
	ThinSnapEvery    = 10 * time.Second
	FindingMargin    = 5 * time.Second
	FindingSpan      = 30 * time.Second
	MaxFindingDetail = 2 * time.Minute
)

// sample is what the Collector keeps of one rebuilt state.
type sample struct {
	ok     bool
	active uint8                    // bit i: player i is active
	xy     [2 * MaxPlayers]float32  // x, y of each player (float32 values are exact)
	wide   *[2 * MaxPlayers]float64 // the values, when some are not exact as float32
	snap   *snapshot
}

// snapshot is a state's things and level, read through levelmap.
type snapshot struct {
	enemies, items, lifts, shots []int
	colors                       map[int]int // player → color
	level                        *Level      // set for a level sequence's first snapshot
}

// maxLevels bounds the levels (a line's level sequences) whose blocks are
// kept, against captures that change level without end.
const maxLevels = 4096

// chunk is the number of samples of one allocation.
const chunk = 4096

// Collector gathers the report's data while an engine runs: set up the
// engine's configuration with Configure, run the engine, then call Data.
type Collector struct {
	// Schema is a state layout for sizes the built-in schemas do not know.
	Schema *schema.Schema
	// FullDetail is the longest capture whose replay keeps every state
	// (0: the package's FullDetail).
	FullDetail time.Duration
	// Extra are findings shown beside the engine's (a front end's own).
	Extra []engine.Finding

	mu       sync.Mutex
	chunks   [][]sample                     // by replay.State.Seq
	lines    map[reassemble.Chain]*lineSnap // snapshot pacing per line
	schemas  map[reassemble.Chain]*schema.Schema
	haveLvls map[levelKey]bool
}

type lineSnap struct {
	first, next time.Time
}

type levelKey struct {
	line reassemble.Chain
	slsn int
}

// NewCollector returns a Collector.
func NewCollector() *Collector {
	return &Collector{
		lines:    map[reassemble.Chain]*lineSnap{},
		schemas:  map[reassemble.Chain]*schema.Schema{},
		haveLvls: map[levelKey]bool{},
	}
}

// Configure adds to cfg the work and the state inspection the report
// needs: the state timeline (which states each client acknowledged), the
// health and every rebuilt state's players. A caller's Inspect still runs.
func (c *Collector) Configure(cfg engine.Config) engine.Config {
	cfg.Work |= engine.Timeline | engine.Health | engine.Findings
	if cfg.Schema == nil {
		cfg.Schema = c.Schema
	} else if c.Schema == nil {
		c.Schema = cfg.Schema
	}
	next := cfg.Inspect
	cfg.Inspect = func(s *replay.State, dif, st []byte) {
		if next != nil {
			next(s, dif, st)
		}
		c.inspect(s, st)
	}
	if cfg.OnPacket == nil {
		// Without it every packet is boxed into an event for OnEvent.
		cfg.OnPacket = func(*engine.PacketEvent) {}
	}
	return cfg
}

// inspect reads one rebuilt state: its players always, its things and
// level at the snapshot pace of its line.
func (c *Collector) inspect(s *replay.State, st []byte) {
	sch := schema.For(len(st), c.Schema)
	if sch.View == nil || sch.View.Players == nil {
		return
	}
	var sm sample
	sm.ok = true
	p := sch.View.Players
	r := sch.Region(p.Region)
	if r == nil {
		return
	}
	fa, fx, fy := r.Field(p.Active), r.Field(p.X), r.Field(p.Y)
	if fa == nil || fx == nil || fy == nil {
		return
	}
	for i := 0; i < r.Count() && i < MaxPlayers; i++ {
		base := r.Offset + i*r.Elem
		if a, _ := schema.Value(st, base+fa.Offset, fa.Type, fa.Size); a == 0 || math.IsNaN(a) {
			continue
		}
		sm.active |= 1 << i
		x, _ := schema.Value(st, base+fx.Offset, fx.Type, fx.Size)
		y, _ := schema.Value(st, base+fy.Offset, fy.Type, fy.Size)
		sm.xy[2*i], sm.xy[2*i+1] = float32(x), float32(y)
		if sm.wide == nil && (inexact(x) || inexact(y)) {
			sm.wide = new([2 * MaxPlayers]float64)
			for k := range 2 * i {
				sm.wide[k] = float64(sm.xy[k])
			}
		}
		if sm.wide != nil {
			sm.wide[2*i], sm.wide[2*i+1] = x, y
		}
	}
	line := s.Line()
	c.mu.Lock()
	ls := c.lines[line]
	if ls == nil {
		ls = &lineSnap{first: s.TS}
		c.lines[line] = ls
		c.schemas[line] = sch
	}
	take := !s.TS.Before(ls.next)
	if take {
		every := SnapEvery
		if s.TS.Sub(ls.first) >= FullDetail {
			every = ThinSnapEvery
		}
		ls.next = s.TS.Add(every)
	}
	lk := levelKey{line, s.SLSN}
	needLevel := !c.haveLvls[lk] && len(c.haveLvls) < maxLevels
	if needLevel {
		take = true
		c.haveLvls[lk] = true
	}
	c.mu.Unlock()
	if take {
		sm.snap = snap(sch, st, needLevel)
	}
	c.mu.Lock()
	c.put(s.Seq, sm)
	c.mu.Unlock()
}

// snap reads a state's things (and its level, with level) through
// levelmap.
func snap(sch *schema.Schema, st []byte, level bool) *snapshot {
	m, err := levelmap.Read(sch, st)
	if err != nil {
		return nil
	}
	sn := &snapshot{colors: map[int]int{}}
	for _, a := range m.Actors {
		if a.X < 0 && a.Y < 0 && (math.IsNaN(a.PX) || math.IsInf(a.PX, 0)) {
			continue
		}
		xy := []int{int(math.Round(a.PX)), int(math.Round(a.PY))}
		switch a.Thing {
		case levelmap.Enemy:
			sn.enemies = append(sn.enemies, xy...)
		case levelmap.Item:
			sn.items = append(sn.items, xy...)
		case levelmap.Lift:
			sn.lifts = append(sn.lifts, xy...)
		case levelmap.Shot:
			sn.shots = append(sn.shots, xy...)
		case levelmap.Player:
			sn.colors[a.Index] = a.Color
		}
	}
	if level {
		b := make([]byte, len(m.Cells))
		for i, cl := range m.Cells {
			b[i] = '0' + byte(cl.Tile)
		}
		sn.level = &Level{W: m.W, H: m.H, Block: m.Block, Tiles: string(b)}
	}
	return sn
}

// put stores the sample of state seq; c.mu is held.
func (c *Collector) put(seq int, sm sample) {
	if seq < 0 {
		return
	}
	k := seq / chunk
	for len(c.chunks) <= k {
		c.chunks = append(c.chunks, nil)
	}
	if c.chunks[k] == nil {
		c.chunks[k] = make([]sample, chunk)
	}
	c.chunks[k][seq%chunk] = sm
}

// get returns the sample of state seq (its ok is false when none).
func (c *Collector) get(seq int) *sample {
	k := seq / chunk
	if seq < 0 || k >= len(c.chunks) || c.chunks[k] == nil {
		return &sample{}
	}
	return &c.chunks[k][seq%chunk]
}

// inexact reports whether v is not exactly a float32.
func inexact(v float64) bool { return !math.IsNaN(v) && float64(float32(v)) != v }
