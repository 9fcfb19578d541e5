package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pmdrive "github.com/pmdump/pmdump/drive"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/schema"
)

type driveOpts struct {
	to       string
	conv     int
	json     bool
	schema   string
	schedule bool
	timeout  time.Duration
	wait     time.Duration
	maxTime  time.Duration
	exec     string
	execLog  string
	retries  int
	lead     int32
}

func newDriveCmd() *cobra.Command {
	var o driveOpts
	c := &cobra.Command{
		Use:   "drive CAPTURE… --to HOST:PORT",
		Short: "Replay a recorded game's clients against a real game server and check its states",
		Long: `drive plays the clients of a recorded game (the modern era and every
version after it) against a live game server, frame for frame, and checks that
the server sends the recorded states again.

From the capture alone it derives the schedule: each client joins in the
server frame of its recorded join reply, with its recorded color and host name;
each input (cdat) and file request (crfl) is read by the server in the frame
of the newest state sent before it arrived, or later when the recorded states
show the player's controls only then. Inputs whose frame the states cannot
confirm are listed as uncertain.

It then joins the server as a remote-control client (cjrc), whose snfo gives
the server's frame after every frame, shakes hands for each client shortly
before its join, and sends each packet as soon as the server has finished the
frame before the one it must be read in. It acknowledges every state the way
the game's client does, answers file transfers, stops a client where the
recording shows it left, and ends at the recording's last state. Every state
the server sends is rebuilt and compared with the recorded state of the same
level sequence and frame; the first that differs is named field by field,
with the input most probably read in another frame.

An input the server holds until its own frame (one that was not late in the
recording, outside a level-done phase) goes --lead frames early, so a busy
machine cannot make it late; the others just before their frame. In the
versions without a handshake the server handles a join when it arrives, so a
join goes half a frame after the frame it was read in has run. The summary
gives drive's margin before each packet's frame and names lateness when it
explains a divergence.

The server must be a fresh one of the same version and data as the recorded
server, with no other client, and its frames start when its level does: drive
has to hear it before the recording's first join. Start drive first (it reads
the capture, then waits --wait for the server), or let drive start the server
with --exec at the right moment; --retries then runs a diverged run again on
a fresh server. A server already past the first join is refused at once.

Exit status 0 when every recorded state was sent again, 1 when the run
diverged (or went past recovery, or reached --max-time), 2 when the capture
cannot be read, the server does not answer or started too early.`,
		Example: `  pmdump drive multi.pcap --to 127.0.0.1:24785          # then start the server
  pmdump drive multi.pcap --to 127.0.0.1:24785 --exec 'cd srv && exec ./pm -sh 1' --retries 3
  pmdump drive multi.pcap --schedule
  pmdump drive game.pcapng --conv 4 --to 10.0.0.1:24785 --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runDriveCmd(cmd, args, &o) },
	}
	f := c.Flags()
	f.StringVar(&o.to, "to", "", "the game server's listening socket `HOST:PORT`")
	f.IntVar(&o.conv, "conv", 0, "drive the game of conversation `N` (as pmdump stats numbers them)")
	f.BoolVar(&o.json, "json", false, "print events as JSON, one object per line")
	f.StringVar(&o.schema, "schema", "", "state layout `FILE` for states of another size (JSON)")
	f.BoolVar(&o.schedule, "schedule", false, "print the schedule derived from the capture and exit")
	f.DurationVar(&o.timeout, "timeout", 5*time.Second, "give up when the server sends no frame for `D` during the run")
	f.DurationVar(&o.wait, "wait", 10*time.Second, "wait up to `D` for the server's first answer")
	f.DurationVar(&o.maxTime, "max-time", 0, "end the run after `D` with its summary (0: no limit)")
	f.StringVar(&o.exec, "exec", "", "start the server with the shell command line `CMD` at the right moment, and stop it at the end")
	f.StringVar(&o.execLog, "exec-log", "", "write the started server's output to `FILE` (default: a temporary file, named at the end)")
	f.IntVar(&o.retries, "retries", 0, "with --exec, run a diverged run again on a fresh server up to `N` times")
	f.Int32Var(&o.lead, "lead", pmdrive.DefaultLead, "send inputs the server holds `N` frames early (0: none)")
	return c
}

func runDriveCmd(cmd *cobra.Command, args []string, o *driveOpts) error {
	if o.to == "" && !o.schedule {
		return usagef("--to HOST:PORT is required (or --schedule)")
	}
	if o.retries < 0 || o.lead < 0 {
		return usagef("--retries and --lead cannot be negative")
	}
	if o.retries > 0 && o.exec == "" {
		return usagef("--retries needs --exec: a rerun needs a fresh server")
	}
	var user *schema.Schema
	if o.schema != "" {
		s, err := loadSchema(o.schema)
		if err != nil {
			return err
		}
		user = s
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rec, err := pmdrive.Load(ctx, args, pmdrive.LoadOptions{Conv: o.conv, Schema: user})
	if err != nil {
		if errors.Is(err, engine.ErrUnreadable) {
			return inputError{err}
		}
		return usageError{err}
	}
	defer rec.Close()
	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	for _, w := range rec.Warnings {
		fmt.Fprintln(stderr, "pmdump: warning:", w)
	}
	enc := json.NewEncoder(out)
	if o.json {
		enc.Encode(struct {
			Event   string                `json:"event"`
			Clients []*pmdrive.Client     `json:"clients"`
			Checks  map[pmdrive.Check]int `json:"checks"`
			End     pmdrive.Key           `json:"end"`
			States  int                   `json:"states"`
		}{"schedule", rec.Clients, rec.Counts(), rec.End, rec.States})
		for _, a := range rec.Uncertain() {
			enc.Encode(pmdrive.Event{Event: "uncertain", Client: a.Client, Action: a})
		}
	} else {
		printSchedule(out, rec, o.schedule)
	}
	if o.schedule {
		if o.json {
			for _, a := range rec.Actions {
				enc.Encode(pmdrive.Event{Event: "action", Client: a.Client, Action: a})
			}
		}
		return nil
	}
	term := isTerminal(stderr) && !o.json
	opt := pmdrive.Options{Timeout: o.timeout, Wait: o.wait, MaxTime: o.maxTime, Exec: o.exec, Retries: o.retries, Lead: o.lead}
	if o.lead == 0 {
		opt.Lead = -1
	}
	var execLog *os.File
	if o.exec != "" {
		if o.execLog != "" {
			execLog, err = os.Create(o.execLog)
		} else {
			execLog, err = os.CreateTemp("", "pmdump-drive-server-*.log")
		}
		if err != nil {
			return inputError{fmt.Errorf("the server's output: %w", err)}
		}
		defer execLog.Close()
		opt.ExecOutput = execLog
	}
	opt.OnEvent = func(ev pmdrive.Event) {
		if o.json {
			enc.Encode(ev)
			return
		}
		switch ev.Event {
		case "server":
			fmt.Fprintf(out, "server answered in frame %d\n", ev.At.Frame)
		case "retry":
			if term {
				fmt.Fprint(stderr, "\r\033[K")
			}
			s := ev.Summary
			fmt.Fprintf(out, "try %d diverged (%d states equal, %d different, %d missing); again on a fresh server\n", s.Tries, s.Equal, s.Different, s.Missing)
		case "join":
			if term {
				fmt.Fprint(stderr, "\r\033[K")
			}
			fmt.Fprintf(out, "client %d joined as player %d in frame %d\n", ev.Client, ev.Player, ev.At.Frame)
		case "late":
			if term {
				fmt.Fprint(stderr, "\r\033[K")
			}
			fmt.Fprintf(out, "late: %s, sent for frame %d\n", ev.Action, ev.At.Frame)
		case "divergence":
			if term {
				fmt.Fprint(stderr, "\r\033[K")
			}
			fmt.Fprintf(out, "first divergence, client %d (player %d), level sequence %d: %s\n", ev.Client, ev.Player, ev.At.SLSN, ev.Divergence.Text)
		case "progress":
			if term {
				fmt.Fprintf(stderr, "\r\033[Kframe %d:%d  %d equal  %d different", ev.At.SLSN, ev.At.Frame, ev.Counts.Equal, ev.Counts.Different)
			}
		}
	}
	sum, err := pmdrive.Run(ctx, rec, o.to, opt)
	if term {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if execLog != nil && !o.json {
		defer fmt.Fprintf(stderr, "pmdump: the server's output is in %s\n", execLog.Name())
	}
	if err != nil && sum == nil {
		var late *pmdrive.LateStartError
		if errors.As(err, &late) {
			return inputError{fmt.Errorf("%w (--wait D waits for it; --exec 'CMD' starts it)", err)}
		}
		return inputError{err}
	}
	if !o.json {
		fmt.Fprintf(out, "states: %d equal, %d different, %d missing, %d not recorded; %d packets sent late, %d difs not rebuilt\n",
			sum.Equal, sum.Different, sum.Missing, sum.Unrecorded, sum.LateActions, sum.Unbuilt)
		fmt.Fprintln(out, sum.Margin)
		if sum.Tries > 1 {
			fmt.Fprintf(out, "tries: %d\n", sum.Tries)
		}
		if sum.Stopped != "" {
			fmt.Fprintln(out, "stopped:", sum.Stopped)
		}
		if sum.Cause != "" {
			fmt.Fprintln(out, "cause:", sum.Cause)
		}
	}
	if err != nil {
		return verifyError{fmt.Errorf("interrupted: %w", err)}
	}
	if !sum.Reproduced {
		return verifyError{fmt.Errorf("the run diverged: %d of %d recorded states differ, %d were not sent", sum.Different, rec.States, sum.Missing)}
	}
	if !o.json {
		fmt.Fprintf(out, "reproduced: the server sent all %d recorded states again\n", rec.States)
	}
	return nil
}

// printSchedule prints the clients and the checks of the schedule; with
// all, every packet of it.
func printSchedule(w io.Writer, rec *pmdrive.Recording, all bool) {
	size := 0
	if rec.Schema != nil {
		size = rec.Schema.Size
	}
	fmt.Fprintf(w, "game of %d clients, %d-byte states, %d recorded states up to level sequence %d frame %d\n",
		len(rec.Clients), size, rec.States, rec.End.SLSN, rec.End.Frame)
	for _, c := range rec.Clients {
		fmt.Fprintf(w, "  client %d: conversation %d, %s %q color %d, player %d; joins in %d:%d, last read in %d:%d\n",
			c.N, c.Conv, c.Addr, c.Hostname, c.Color, c.Player, c.Join.SLSN, c.Join.Frame, c.Last.SLSN, c.Last.Frame)
	}
	kinds := map[pmdrive.Kind]int{}
	for _, a := range rec.Actions {
		kinds[a.Kind]++
	}
	n := rec.Counts()
	fmt.Fprintf(w, "schedule: %d joins, %d inputs, %d file requests; %d confirmed by the states, %d read later than the packet order says, %d unchecked, %d uncertain\n",
		kinds[pmdrive.Join], kinds[pmdrive.Input], kinds[pmdrive.File], n[pmdrive.Confirmed], n[pmdrive.Moved], n[pmdrive.Unchecked], n[pmdrive.Uncertain])
	for _, a := range rec.Actions {
		if all || a.Check == pmdrive.Uncertain {
			line := fmt.Sprintf("  %s: %s", a, a.Check)
			if a.Reason != "" {
				line += " (" + a.Reason + ")"
			}
			if a.At != a.Ordered && a.Ordered != (pmdrive.Key{}) {
				line += fmt.Sprintf(", packet order says %d", a.Ordered.Frame)
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
}
