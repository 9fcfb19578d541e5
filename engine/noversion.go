package engine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
)

// NoVersion is what every front end says of a conversation of no known
// version, given why it is of none (session.Conversation.Unrecognised):
// "of no known version: stdf header fits no known version; pmdump knows
// legacy, modern, …; --era NAME forces one".
func NoVersion(reason string) string {
	return "of no known version: " + reason + "; pmdump knows " + strings.Join(decode.VersionNames(), ", ") + "; --era NAME forces one"
}

// NoVersionNote says in one line which of convs are of no known version
// and why, for a front end that prints packets and owes the reader the
// reason they are not decoded: "conversation 2 (10.0.0.3:48838) is of no
// known version: …", "conversations 1 and 2 are of no known version: …";
// "" when every conversation is of a known version (or not told yet).
func NoVersionNote(convs []session.Conversation) string {
	var ids, reasons []string
	var client string
	for i := range convs {
		c := &convs[i]
		if c.Unrecognised == "" {
			continue
		}
		ids = append(ids, strconv.Itoa(c.ID))
		if c.Client.IsValid() {
			client = c.Client.String()
		}
		if !slices.Contains(reasons, c.Unrecognised) {
			reasons = append(reasons, c.Unrecognised)
		}
	}
	switch len(ids) {
	case 0:
		return ""
	case 1:
		who := "conversation " + ids[0]
		if client != "" {
			who += " (" + client + ")"
		}
		return who + " is " + NoVersion(reasons[0])
	}
	list := strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
	return "conversations " + list + " are " + NoVersion(strings.Join(reasons, ", "))
}

// noVersionPacket takes a packet of w's conversation: one that fits no
// version in a conversation of no known version is evidence for its
// finding.
func (fc *findingCollector) noVersionPacket(w *convWatch, r *session.Record) {
	if r.Kind != session.Malformed || w.unrecognised == "" || !errors.Is(r.Packet.Err, decode.ErrNoVersion) {
		return
	}
	w.noVersion.add(r.N, r.TS, 0)
	w.noVersionN++
}

// noVersionFinding reports a conversation that is of no known version at
// the capture's end, with why and the packets that fit none: pmdump shows
// them undecoded, and a user wants to know that it is not their capture
// that is broken.
func (fc *findingCollector) noVersionFinding(w *convWatch) {
	if w.unrecognised == "" {
		return
	}
	v := w.noVersion
	if v.first == 0 {
		v = evidence{first: w.firstN, worst: w.firstN, last: w.lastN, start: w.first, end: w.last}
	}
	v.worst = v.first // the packet that told: the first of them
	reason := fmt.Sprintf("%s (%d of its %d packets fit none)", w.unrecognised, w.noVersionN, w.packets)
	f := fc.finding(w, KindNoVersion, SeverityWarning, v, "the conversation of %s is %s", w.who(), NoVersion(reason))
	f.Figures["packets"], f.Figures["conv_packets"] = float64(w.noVersionN), float64(w.packets)
	fc.found(f)
}
