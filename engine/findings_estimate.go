package engine

import (
	"math"
	"time"
)

// The loss estimate rests on probes: the datagrams of a direction whose
// delivery the protocol shows in full, each one sent either seen or proven
// lost. Server → client: the pieces of the difs (a dif lost whole counts
// one: a dif of k pieces is lost whole with chance p^k), the legacy serr, the modern pong;
// client → server: the modern ping and pang, the legacy sdak. A cdat (sent
// only when the controls change) or a stak (only for the difs applied)
// can be lost unseen, so they prove loss but estimate none.

// Burst detection, per direction: a window of burstWindow seconds whose
// probes were lost far more often than the rest of the conversation's.
const (
	burstWindow = 10 // seconds
	// burstMinLost is the fewest probes lost in a window that can make a
	// burst.
	burstMinLost = 4
	// burstTimes: the window's rate is at least this many times the rest's.
	burstTimes = 3
	// burstP is the chance, were the window's probes lost at the rest's
	// rate, of losing as many as it did, under which the window is a
	// burst: 1 in 10⁷, so that an hour-long game of 8 players (some 50,000
	// windows) shows none by chance.
	burstP = 1e-7
	// burstFloor is the lowest base rate a window is held against (a
	// clean game loses nothing, and one loss is no burst).
	burstFloor = 0.005
	// maxProbeSecs bounds the seconds a direction's probes are kept (a
	// day).
	maxProbeSecs = 86400
)

// probeSec is one second of one direction's probes.
type probeSec struct {
	seen, lost float64
	// the capture frames and times of the first and last probe lost
	firstN, lastN int
	first, last   time.Time
}

// probes counts one direction's probes second by second.
type probes struct {
	t0   int64 // Unix second of secs[0]
	secs []probeSec
}

func (p *probes) at(ts time.Time) *probeSec {
	s := ts.Unix()
	if p.secs == nil {
		p.t0 = s
	}
	i := s - p.t0
	if i < 0 {
		i = 0 // time going back: the first second
	}
	if i >= maxProbeSecs {
		return nil
	}
	for int64(len(p.secs)) <= i {
		p.secs = append(p.secs, probeSec{})
	}
	return &p.secs[i]
}

// saw counts k probes that arrived at ts.
func (p *probes) saw(k float64, ts time.Time) {
	if p == nil || k <= 0 {
		return
	}
	if s := p.at(ts); s != nil {
		s.seen += k
	}
}

// miss counts k probes proven lost by the packet at n, ts.
func (p *probes) miss(k float64, n int, ts time.Time) {
	if p == nil || k <= 0 {
		return
	}
	s := p.at(ts)
	if s == nil {
		return
	}
	s.lost += k
	if s.firstN == 0 || ts.Before(s.first) {
		s.firstN, s.first = n, ts
	}
	if !ts.Before(s.last) {
		s.lastN, s.last = n, ts
	}
}

// totals is every probe seen and lost.
func (p *probes) totals() (seen, lost float64) {
	for _, s := range p.secs {
		seen += s.seen
		lost += s.lost
	}
	return seen, lost
}

// Estimate is a loss rate estimated from probes, with its 95 % interval
// (Wilson's score interval).
type Estimate struct {
	Lost, Probes float64
	Rate         float64
	Low, High    float64
}

// estimate is the loss rate of lost of n probes.
func estimate(lost, n float64) Estimate {
	e := Estimate{Lost: lost, Probes: n}
	if n <= 0 {
		return e
	}
	const z = 1.959964 // 95 %
	p := lost / n
	d := 1 + z*z/n
	c := (p + z*z/(2*n)) / d
	h := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / d
	e.Rate, e.Low, e.High = p, max(0, c-h), min(1, c+h)
	return e
}

// burst is a window of concentrated loss.
type burst struct {
	from, to    int // seconds, indexes of probes.secs, to inclusive
	seen, lost  float64
	base        float64 // the rate of the rest of the conversation
	firstN      int
	lastN       int
	start, end  time.Time
	probability float64
}

// bursts finds the windows of concentrated loss: every window of
// burstWindow seconds whose loss, held against the rate of the rest, is
// at most burstP likely; overlapping ones are merged, then their edges
// trimmed to the seconds lost at the burst's rate.
func (p *probes) bursts() []burst {
	seen, lost := p.totals()
	n := seen + lost
	if lost < burstMinLost {
		return nil
	}
	// prefix sums
	m := len(p.secs)
	cs, cl := make([]float64, m+1), make([]float64, m+1)
	for i, s := range p.secs {
		cs[i+1], cl[i+1] = cs[i]+s.seen+s.lost, cl[i]+s.lost
	}
	flag := make([]bool, m)
	any := false
	for a := 0; a < m; a++ {
		b := min(a+burstWindow, m)
		nw, lw := cs[b]-cs[a], cl[b]-cl[a]
		if lw < burstMinLost || n-nw < 2*nw {
			continue // too little lost, or too little left to compare with
		}
		base := max((lost-lw)/(n-nw), burstFloor)
		if lw/nw < burstTimes*base || lw/nw < BurstRate {
			continue
		}
		if binomTail(int(math.Round(nw)), int(math.Round(lw)), base) >= burstP {
			continue
		}
		for i := a; i < b; i++ {
			flag[i] = true
		}
		any = true
	}
	if !any {
		return nil
	}
	var out []burst
	for i := 0; i < m; {
		if !flag[i] {
			i++
			continue
		}
		j := i
		for j+1 < m && flag[j+1] {
			j++
		}
		out = append(out, p.trim(i, j, lost, n))
		i = j + 1
	}
	return out
}

// trim narrows a burst to the seconds that are not background: an edge
// second is dropped while it lost nothing, or less than the burst's rate
// allows of a second it only partly covers (a third of it, and at least
// 3 times the rest's rate).
func (p *probes) trim(a, b int, lost, n float64) burst {
	sum := func(a, b int) (s, l float64) {
		for i := a; i <= b; i++ {
			s += p.secs[i].seen + p.secs[i].lost
			l += p.secs[i].lost
		}
		return s, l
	}
	for range 3 { // the rates settle in a pass or two
		s, l := sum(a, b)
		base := max((lost-l)/max(n-s, 1), burstFloor)
		low := max(l/max(s, 1)/3, burstTimes*base)
		edge := func(i int) bool {
			x := p.secs[i]
			return x.lost == 0 || x.lost/(x.seen+x.lost) < low
		}
		for a < b && edge(a) {
			a++
		}
		for b > a && edge(b) {
			b--
		}
	}
	s, l := sum(a, b)
	bu := burst{from: a, to: b, seen: s - l, lost: l, base: max((lost-l)/max(n-s, 1), 0)}
	bu.firstN, bu.start = p.secs[a].firstN, p.secs[a].first
	bu.lastN, bu.end = p.secs[b].lastN, p.secs[b].last
	bu.probability = binomTail(int(math.Round(s)), int(math.Round(l)), max(bu.base, burstFloor))
	return bu
}

// binomTail is the chance of k or more successes in n trials of chance p.
func binomTail(n, k int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > n || p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	ln, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for i := k; i <= n; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		t := math.Exp(ln - a - b + float64(i)*lp + float64(n-i)*lq)
		sum += t
		if t < sum*1e-12 && float64(i) > float64(n)*p {
			break
		}
	}
	return min(sum, 1)
}
