// Package manual holds the tests of edihub's manual, README.md and the
// pages of docs/: every relative link leads to a file of the repository
// and, when it names an anchor, to a heading of that page, so that a page
// moved or a heading renamed cannot leave a reader at a dead end.
package manual
