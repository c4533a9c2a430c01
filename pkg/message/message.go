// Package message bounds the text Kuvryn Sync writes into conditions,
// Events, hook and wave errors, and spans.
package message

import "unicode/utf8"

// Bound cuts s to at most limit bytes on a rune boundary, marking the cut
// with "..." (a limit under three bytes leaves the marker alone).
func Bound(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "..."
	cut := max(limit-len(ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
