package web

import (
	"mime"
	"strings"
)

// standardName is a standard as people write it.
func standardName(standard string) string {
	if standard == "edifact" {
		return "EDIFACT"
	}
	return strings.ToUpper(standard)
}

// fromInterchange reports whether bytes received as contentType were an
// X12 or EDIFACT interchange (text/plain is one only as such: IDoc-XML is
// never plain text).
func fromInterchange(contentType string) bool {
	media, _, _ := mime.ParseMediaType(contentType)
	return media == "application/edi-x12" || media == "application/edifact" || media == "text/plain"
}
