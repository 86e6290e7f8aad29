package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AdminPage is one admin page to time: a name for the report and its path
// with query.
type AdminPage struct {
	Name string
	Path string
}

// ReadAdminPages reads pages from r, one a line: a name, spaces, the path.
// Blank lines and lines starting with # are skipped.
func ReadAdminPages(r io.Reader) ([]AdminPage, error) {
	var pages []AdminPage
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, path, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("page %q: want a name and a path", line)
		}
		pages = append(pages, AdminPage{Name: name, Path: strings.TrimSpace(path)})
	}
	return pages, sc.Err()
}

// AdminTiming is how long one page took to render for one user, as the
// browser waits for it: from sending the request to the last byte.
type AdminTiming struct {
	User   string  `json:"user"`
	Page   string  `json:"page"`
	Path   string  `json:"path"`
	Status int     `json:"status"`
	Runs   int     `json:"runs"`
	P50    float64 `json:"median_ms"`
	P95    float64 `json:"p95_ms"`
	Max    float64 `json:"max_ms"`
	// Plan is the plan of the page's slowest statement, when an explain
	// log was given (see AdminClient.SlowestPlan).
	Plan string `json:"plan,omitempty"`
}

// AdminClient is a signed-in admin's browser, over plain HTTP.
type AdminClient struct {
	base string
	http *http.Client
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// SignIn signs in at base through the sign-in form, as a browser does.
func SignIn(ctx context.Context, base, email, password string) (*AdminClient, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &AdminClient{base: base, http: &http.Client{
		Jar: jar, Timeout: 5 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	_, body, err := c.Get(ctx, "/admin/login")
	if err != nil {
		return nil, err
	}
	m := csrfField.FindSubmatch(body)
	if m == nil {
		return nil, errors.New("the sign-in page has no CSRF token")
	}
	form := url.Values{"email": {email}, "password": {password}, "_csrf": {string(m[1])}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/admin/login", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("sign in as %s: status %d", email, resp.StatusCode)
	}
	return c, nil
}

// Get reads path to the end and returns the status and body.
func (c *AdminClient) Get(ctx context.Context, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// Time reads page once unmeasured, then runs times, and summarises them.
// A page that does not answer 200 is reported with its status and no
// timings: an error page is fast and would flatter the table.
func (c *AdminClient) Time(ctx context.Context, user string, page AdminPage, runs int) (AdminTiming, error) {
	t := AdminTiming{User: user, Page: page.Name, Path: page.Path}
	status, _, err := c.Get(ctx, page.Path)
	if t.Status = status; err != nil || status != http.StatusOK {
		return t, err
	}
	latencies := make([]time.Duration, 0, runs)
	for range runs {
		start := time.Now()
		if t.Status, _, err = c.Get(ctx, page.Path); err != nil {
			return t, err
		}
		latencies = append(latencies, time.Since(start))
	}
	slices.Sort(latencies)
	t.Runs = runs
	t.P50, t.P95 = ms(percentile(latencies, 50)), ms(percentile(latencies, 95))
	if runs > 0 {
		t.Max = ms(latencies[runs-1])
	}
	return t, nil
}

// autoExplained is the first line of a plan that PostgreSQL's auto_explain
// writes to the server log: the statement's duration, then the plan.
var autoExplained = regexp.MustCompile(`LOG:  duration: ([0-9.]+) ms  plan:`)

// SlowestPlan reads page once and returns the plan of the slowest
// statement that the server log at logPath gained meanwhile, for a server
// whose sessions load auto_explain with log_min_duration 0. Only entries
// of database dbName count, as other work on the same server logs too.
func (c *AdminClient) SlowestPlan(ctx context.Context, page AdminPage, logPath, dbName string) (string, error) {
	before, err := os.Stat(logPath)
	if err != nil {
		return "", err
	}
	if _, _, err := c.Get(ctx, page.Path); err != nil {
		return "", err
	}
	// auto_explain logs when a statement ends; the log is written a moment
	// after the answer left.
	time.Sleep(200 * time.Millisecond)
	f, err := os.Open(logPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Seek(before.Size(), io.SeekStart); err != nil {
		return "", err
	}
	logged, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	return slowestPlan(string(logged), "@"+dbName+" "), nil
}

// slowestPlan picks, from a stretch of server log, the auto_explain entry
// with the longest duration among those whose prefix holds marker. An
// entry is its first line and the indented lines after it.
func slowestPlan(logged, marker string) string {
	var best string
	bestMS := -1.0
	lines := strings.Split(logged, "\n")
	for i := 0; i < len(lines); i++ {
		m := autoExplained.FindStringSubmatch(lines[i])
		if m == nil || !strings.Contains(lines[i], marker) {
			continue
		}
		entry := []string{"duration: " + m[1] + " ms"}
		inQuery := false
		for i+1 < len(lines) && (strings.HasPrefix(lines[i+1], "\t") || strings.HasPrefix(lines[i+1], " ")) {
			i++
			line := strings.TrimPrefix(lines[i], "\t")
			// The statement's text is long; its first line (sqlc's
			// "-- name: X") names it, and a blank line ends it.
			switch {
			case strings.HasPrefix(line, "Query Text: "):
				inQuery = true
				entry = append(entry, line)
			case inQuery:
				inQuery = strings.TrimSpace(line) != ""
			default:
				entry = append(entry, line)
			}
		}
		if d, _ := strconv.ParseFloat(m[1], 64); d > bestMS {
			bestMS, best = d, strings.Join(entry, "\n")
		}
	}
	return best
}
