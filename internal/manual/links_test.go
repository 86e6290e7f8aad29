package manual

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's root, from this package.
var root = filepath.Join("..", "..")

// link is a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestEveryLinkOfTheManualLeadsSomewhere(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	pages = append(pages, filepath.Join(root, "README.md"))
	require.Greater(t, len(pages), 5, "the manual's pages are found")

	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, target := range links(string(text)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
			}
			name := strings.TrimPrefix(page, root+string(filepath.Separator))
			if _, err := os.Stat(dest); !assert.NoError(t, err, "%s links to %s, which does not exist", name, target) {
				continue
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			destText, err := os.ReadFile(dest)
			require.NoError(t, err)
			assert.Contains(t, anchors(string(destText)), anchor, "%s links to %s, which has no such heading", name, target)
		}
	}
	require.Greater(t, checked, 50, "the links are found")
}

// links are the targets of the Markdown links of text, outside code blocks.
func links(text string) []string {
	var targets []string
	for _, block := range prose(text) {
		for _, m := range link.FindAllStringSubmatch(block, -1) {
			targets = append(targets, m[1])
		}
	}
	return targets
}

// anchors are the anchors GitHub gives the headings of a page: lower case,
// punctuation other than hyphens and underscores dropped, spaces made
// hyphens, and -1, -2 … after a repeated one.
func anchors(text string) []string {
	var names []string
	for _, block := range prose(text) {
		for line := range strings.Lines(block) {
			heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
			if !ok || !strings.HasPrefix(line, "#") {
				continue
			}
			name := anchorOf(strings.TrimSpace(heading))
			base, n := name, 0
			for slices.Contains(names, name) {
				n++
				name = base + "-" + strconv.Itoa(n)
			}
			names = append(names, name)
		}
	}
	return names
}

func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prose is text without its fenced code blocks.
func prose(text string) []string {
	var blocks []string
	for i, part := range strings.Split(text, "```") {
		if i%2 == 0 {
			blocks = append(blocks, part)
		}
	}
	return blocks
}

func TestAnchorsAreGitHubs(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"key-paths", "post-apiedi-hubreceive-messages", "key-paths-1", "whats-new"},
		anchors("# Key paths\n## `POST /api/edi-hub/receive-messages`\n```\n# not a heading\n```\n### Key paths\n#### What's new\n"))
	require.Equal(t, []string{"docs/a.md#b", "c.md"}, links("see [a](docs/a.md#b) and [c](c.md)\n```\n[x](y.md)\n```\n"))
}
