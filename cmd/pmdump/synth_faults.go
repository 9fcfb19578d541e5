package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pmdump/pmdump/synth"
)

// faultFlags are pmdump synth's fault-injection flags, each repeatable.
type faultFlags struct {
	outages, stops, mutes, bursts, delays, slow, forgets, losses, lates []string
}

func (f *faultFlags) add(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.outages, "outage", nil, "drop everything to and from client `N:FROM-TO` (e.g. 2:10s-15s)")
	fs.StringArrayVar(&f.stops, "stop", nil, "client `N:AT` sends nothing from AT on (e.g. 1:20s)")
	fs.StringArrayVar(&f.mutes, "mute", nil, "the server sends client `N:AT` nothing from AT on (e.g. 2:20s)")
	fs.StringArrayVar(&f.bursts, "burst", nil, "drop everything to and from client `N:LENGTH/EVERY[@FROM]` (e.g. 2:300ms/5s)")
	fs.StringArrayVar(&f.delays, "delay", nil, "every datagram to and from client `N:D` arrives D later (e.g. 1:80ms)")
	fs.StringArrayVar(&f.slow, "slow", nil, "client `N:FPS[@FROM]` runs at FPS frames a second (e.g. 3:20@5s)")
	fs.StringArrayVar(&f.losses, "loss-window", nil, "drop each datagram of client `N:RATE[/DIR][@FROM-TO]` with chance RATE, DIR c2s, s2c or both (e.g. 2:0.3/s2c@20s-30s)")
	fs.StringArrayVar(&f.lates, "late", nil, "a SHARE of client `N:SHARE/FRAMES[@FROM-TO]`'s inputs reach the server FRAMES frames late (e.g. 1:0.2/6)")
	fs.StringArrayVar(&f.forgets, "forget", nil, "client `N:AT[/EVERY]` loses the states it holds at AT (and every EVERY after), e.g. 2:8s/5s")
}

// parse turns the flags into synth faults.
func (f *faultFlags) parse() (synth.Faults, error) {
	var out synth.Faults
	split := func(flag, v string) (int, string, error) {
		n, rest, ok := strings.Cut(v, ":")
		c, err := strconv.Atoi(n)
		if !ok || err != nil {
			return 0, "", usagef("--%s %q: want CLIENT:…", flag, v)
		}
		return c, rest, nil
	}
	dur := func(flag, v, s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, usagef("--%s %q: %q is not a duration (10s, 250ms)", flag, v, s)
		}
		return d, nil
	}
	at := func(flag, v, s string) (string, time.Duration, error) {
		body, from, ok := strings.Cut(s, "@")
		if !ok {
			return body, 0, nil
		}
		d, err := dur(flag, v, from)
		return body, d, err
	}
	for _, v := range f.outages {
		c, rest, err := split("outage", v)
		if err != nil {
			return out, err
		}
		a, b, ok := strings.Cut(rest, "-")
		if !ok {
			return out, usagef("--outage %q: want N:FROM-TO", v)
		}
		from, err := dur("outage", v, a)
		if err != nil {
			return out, err
		}
		to, err := dur("outage", v, b)
		if err != nil {
			return out, err
		}
		out.Outages = append(out.Outages, synth.Outage{Client: c, From: from, To: to})
	}
	for _, v := range f.stops {
		c, rest, err := split("stop", v)
		if err != nil {
			return out, err
		}
		t, err := dur("stop", v, rest)
		if err != nil {
			return out, err
		}
		out.Stops = append(out.Stops, synth.Stop{Client: c, At: t})
	}
	for _, v := range f.mutes {
		c, rest, err := split("mute", v)
		if err != nil {
			return out, err
		}
		t, err := dur("mute", v, rest)
		if err != nil {
			return out, err
		}
		out.Mutes = append(out.Mutes, synth.Mute{Client: c, At: t})
	}
	for _, v := range f.bursts {
		c, rest, err := split("burst", v)
		if err != nil {
			return out, err
		}
		body, from, err := at("burst", v, rest)
		if err != nil {
			return out, err
		}
		a, b, ok := strings.Cut(body, "/")
		if !ok {
			return out, usagef("--burst %q: want N:LENGTH/EVERY[@FROM]", v)
		}
		length, err := dur("burst", v, a)
		if err != nil {
			return out, err
		}
		every, err := dur("burst", v, b)
		if err != nil {
			return out, err
		}
		out.Bursts = append(out.Bursts, synth.Burst{Client: c, From: from, Every: every, Length: length})
	}
	for _, v := range f.delays {
		c, rest, err := split("delay", v)
		if err != nil {
			return out, err
		}
		d, err := dur("delay", v, rest)
		if err != nil {
			return out, err
		}
		out.Delays = append(out.Delays, synth.Delay{Client: c, Add: d})
	}
	for _, v := range f.slow {
		c, rest, err := split("slow", v)
		if err != nil {
			return out, err
		}
		body, from, err := at("slow", v, rest)
		if err != nil {
			return out, err
		}
		fps, err := strconv.ParseFloat(body, 64)
		if err != nil {
			return out, usagef("--slow %q: %q is not a frame rate", v, body)
		}
		out.Slow = append(out.Slow, synth.Slow{Client: c, FPS: fps, From: from})
	}
	window := func(flag, v, s string) (string, time.Duration, time.Duration, error) {
		body, w, ok := strings.Cut(s, "@")
		if !ok {
			return body, 0, 0, nil
		}
		a, b, _ := strings.Cut(w, "-")
		from, err := dur(flag, v, a)
		if err != nil || b == "" {
			return body, from, 0, err
		}
		to, err := dur(flag, v, b)
		return body, from, to, err
	}
	for _, v := range f.losses {
		c, rest, err := split("loss-window", v)
		if err != nil {
			return out, err
		}
		body, from, to, err := window("loss-window", v, rest)
		if err != nil {
			return out, err
		}
		r, dir, _ := strings.Cut(body, "/")
		rate, err := strconv.ParseFloat(r, 64)
		if err != nil {
			return out, usagef("--loss-window %q: %q is not a rate (0.3)", v, r)
		}
		if dir == "both" {
			dir = synth.Both
		}
		out.Losses = append(out.Losses, synth.Loss{Client: c, Dir: dir, Rate: rate, From: from, To: to})
	}
	for _, v := range f.lates {
		c, rest, err := split("late", v)
		if err != nil {
			return out, err
		}
		body, from, to, err := window("late", v, rest)
		if err != nil {
			return out, err
		}
		a, b, ok := strings.Cut(body, "/")
		share, err1 := strconv.ParseFloat(a, 64)
		frames, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil {
			return out, usagef("--late %q: want N:SHARE/FRAMES[@FROM-TO]", v)
		}
		out.Lates = append(out.Lates, synth.Late{Client: c, Share: share, Frames: frames, From: from, To: to})
	}
	for _, v := range f.forgets {
		c, rest, err := split("forget", v)
		if err != nil {
			return out, err
		}
		a, b, every := rest, "", time.Duration(0)
		if i := strings.Index(rest, "/"); i >= 0 {
			a, b = rest[:i], rest[i+1:]
			if every, err = dur("forget", v, b); err != nil {
				return out, err
			}
		}
		t, err := dur("forget", v, a)
		if err != nil {
			return out, err
		}
		out.Forgets = append(out.Forgets, synth.Forget{Client: c, At: t, Every: every})
	}
	return out, nil
}

// describeFaults says what was injected, for the summary line.
func describeFaults(f synth.Faults) string {
	n := len(f.Outages) + len(f.Stops) + len(f.Mutes) + len(f.Bursts) + len(f.Delays) + len(f.Slow) + len(f.Forgets) + len(f.Losses) + len(f.Lates)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d faults injected", n)
}
