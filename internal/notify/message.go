package notify

import (
	"encoding/json"
	"strings"
)

// message is a notification as it is sent: what the row holds, with its
// link made absolute when edihub knows where users reach it.
type message struct {
	ID      int64 // the notification's id
	AlertID *int64
	Event   string
	Rule    string
	Title   string
	Body    string // one line each
	Link    string
}

// lines are the body's lines.
func (m message) lines() []string {
	if m.Body == "" {
		return nil
	}
	return strings.Split(m.Body, "\n")
}

// heading is the one line that says what happened: the event, the rule and
// the title.
func (m message) heading() string {
	return "[" + m.Event + "] " + m.Rule + ": " + m.Title
}

// text is the message as plain text, the body of an email: the heading,
// then the lines, then the link.
func (m message) text() string {
	var b strings.Builder
	b.WriteString(m.heading())
	b.WriteString("\n\n")
	for _, l := range m.lines() {
		b.WriteString(l)
		b.WriteString("\n")
	}
	if m.Link != "" {
		b.WriteString("\n")
		b.WriteString(m.Link)
		b.WriteString("\n")
	}
	return b.String()
}

// slackEscaper escapes the three characters Slack's message format gives a
// meaning (links, mentions), so that a title cannot ping a channel.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackBody is the JSON a Slack-compatible incoming webhook takes: one
// "text" with the heading in bold, the lines, and the link when absolute.
func (m message) slackBody() ([]byte, error) {
	var b strings.Builder
	b.WriteString("*" + slackEscaper.Replace(m.heading()) + "*")
	for _, l := range m.lines() {
		b.WriteString("\n" + slackEscaper.Replace(l))
	}
	switch {
	case strings.HasPrefix(m.Link, "http://"), strings.HasPrefix(m.Link, "https://"):
		b.WriteString("\n<" + slackEscaper.Replace(m.Link) + "|Open in edihub>")
	case m.Link != "":
		b.WriteString("\n" + slackEscaper.Replace(m.Link))
	}
	return json.Marshal(map[string]string{"text": b.String()})
}

// webhookPayload is the JSON body of a generic webhook channel.
type webhookPayload struct {
	// Type is "alert.<event>", as Standard Webhooks payloads name their kind.
	Type           string   `json:"type"`
	NotificationID int64    `json:"notification_id"`
	AlertID        *int64   `json:"alert_id"`
	Event          string   `json:"event"`
	Rule           string   `json:"rule"`
	Title          string   `json:"title"`
	Lines          []string `json:"lines"`
	Link           string   `json:"link"`
}

func (m message) webhookBody() ([]byte, error) {
	lines := m.lines()
	if lines == nil {
		lines = []string{}
	}
	return json.Marshal(webhookPayload{
		Type: "alert." + m.Event, NotificationID: m.ID, AlertID: m.AlertID, Event: m.Event, Rule: m.Rule,
		Title: m.Title, Lines: lines, Link: m.Link,
	})
}
