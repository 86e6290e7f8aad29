package cli

import (
	"runtime/debug"
	"strings"
)

// Version is edihub's version when a release build sets it with
// -ldflags "-X github.com/lefia/edihub/internal/cli.Version=1.4.0"; without
// it, `edihub --version` says the module's version from the build info:
// the pseudo-version Go derives from the commit, or "devel" when the build
// recorded none (-buildvcs=false, go run).
var Version = ""

// versionLine is what `edihub --version` prints: the version, then what Go
// recorded of the build: the commit and its time, whether the checkout had
// changes not committed, and Go's version, e.g.
// "edihub v0.0.0-20261204151154-af3091934dc2 (commit af3091934dc2, 2026-12-04T15:11:54Z; go1.26.8)".
func versionLine() string {
	version := Version
	var details []string
	goVersion := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if version == "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision":
				details = append(details, "commit "+s.Value[:min(12, len(s.Value))])
			case s.Key == "vcs.time":
				details = append(details, s.Value)
			case s.Key == "vcs.modified" && s.Value == "true":
				details = append(details, "modified")
			}
		}
	}
	if version == "" {
		version = "devel"
	}
	line := "edihub " + version
	switch {
	case len(details) > 0 && goVersion != "":
		line += " (" + strings.Join(details, ", ") + "; " + goVersion + ")"
	case goVersion != "":
		line += " (" + goVersion + ")"
	}
	return line
}
