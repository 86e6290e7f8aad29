package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/password"
	"github.com/lefia/edihub/internal/testfactory"
)

// chromiumPath is Debian's Chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// browsers bounds how many tests use tabs at once: the tests run in
// parallel, and each page's renderer wants about a core of the machine's
// two. The bound is on tests, not tabs: a test that opens a second tab (two
// users at once) while holding its first would otherwise wait for ever on
// another test doing the same. browsing holds the tests that took a place.
var (
	browsers = make(chan struct{}, 2)
	browsing sync.Map
)

// shared is the one headless Chromium of the package's browser tests,
// started by the first of them and stopped by TestMain. Starting a browser
// costs seconds of CPU; each test still gets a browser of its own in effect
// (see newBrowser).
var shared struct {
	once sync.Once
	ctx  context.Context
	err  error
	stop func()
}

func TestMain(m *testing.M) {
	// The suite signs in hundreds of users; the hash's cost is not what it
	// tests (package password and auth do, at full cost).
	password.UseLowCost()
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
	}
	os.Exit(code)
}

// startBrowser starts the shared Chromium once, with a fresh profile in a
// temporary --user-data-dir (chromedp makes and removes it).
func startBrowser() (context.Context, error) {
	shared.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromiumPath),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-component-update", true),
		)
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelBrowser := chromedp.NewContext(allocCtx)
		shared.stop = func() {
			cancelBrowser()
			cancelAlloc()
		}
		shared.ctx, shared.err = ctx, chromedp.Do(ctx)
	})
	return shared.ctx, shared.err
}

// Every tab is a window of the width the admin pages are made to fit
// without sideways scrolling.
const viewportWidth, viewportHeight = 1280, 900

// wideViewportWidth is the second width screenshots are taken at.
const wideViewportWidth = 1440

// browser is a tab of the shared Chromium driven by one test.
type browser struct {
	ctx context.Context
	// dialogs counts the JavaScript dialogs (alert, confirm, prompt) the
	// pages opened; an injected script would open one.
	dialogs atomic.Int32
}

// newBrowser opens a tab in a BrowserContext of its own, Chromium's
// incognito profile: cookies, storage and cache start empty and are
// disposed of with the tab, so no test sees another's session. Without
// Chromium the test fails rather than skips, so that a machine missing it
// cannot pass the browser tests unnoticed.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser tests need Chromium at %s (apt-get install chromium, as .ci/run does): %v", chromiumPath, err)
	}
	parent, err := startBrowser()
	require.NoError(t, err, "start Chromium")
	if _, holding := browsing.LoadOrStore(t, true); !holding {
		browsers <- struct{}{}
		t.Cleanup(func() {
			browsing.Delete(t)
			<-browsers
		})
	}

	tab, cancelTab := chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
	// A bound on the whole test's browsing, so that a hung page fails the
	// test instead of the package's timeout.
	ctx, cancelTimeout := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
	})

	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(viewportWidth, viewportHeight)), "open a tab")
	b := &browser{ctx: ctx}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return // the tab has gone
			}
			b.dialogs.Add(1)
			// Dismiss it, or the page would wait for ever.
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
		}
	}()
	return b
}

// do runs actions in the browser and fails the test on an error.
func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(b.ctx, actions...))
}

// signIn opens an admin page, which sends the browser to the sign-in
// form, and signs in as email with testfactory.Password.
func (b *browser) signIn(t *testing.T, baseURL, path, email string) {
	t.Helper()
	b.do(t,
		chromedp.Navigate(baseURL+path),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testfactory.Password),
		chromedp.Click(chromedp.CSS(`#sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`#signed-in-as`)),
	)
}

// location is the page's current URL.
func (b *browser) location(t *testing.T) string {
	t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	require.NoError(t, err)
	return loc
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// screenshot saves the whole page, as wide as every test window, as
// name.png, and as wide as wideViewportWidth, as name-1440.png, in the
// directory EDIHUB_SCREENSHOTS names, for a person to look at; without it,
// nothing is taken.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("EDIHUB_SCREENSHOTS")
	if dir == "" {
		return
	}
	shoot := func(width int64, file string) {
		require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(width, viewportHeight)), "window of %d px", width)
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err, "screenshot %s", file)
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), png, 0o644))
	}
	shoot(wideViewportWidth, fmt.Sprintf("%s-%d.png", name, wideViewportWidth))
	// Last at the tests' own width, which the test goes on at.
	shoot(viewportWidth, name+".png")
}

// requireFitsWidth fails the test when the page is wider than the window,
// which a person would have to scroll sideways.
func (b *browser) requireFitsWidth(t *testing.T) {
	t.Helper()
	width := eval[int](t, b, `document.documentElement.scrollWidth`)
	require.LessOrEqual(t, width, viewportWidth, "the page is %d px wide in a window of %d px", width, viewportWidth)
}
