package printers

import (
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
)

// Color is an ANSI foreground colour. Every Color has the same length, so a
// table in which every cell carries one stays aligned under text/tabwriter,
// which counts escape bytes as width.
type Color string

// Colours used by the tables.
const (
	Default Color = "\x1b[39m"
	Red     Color = "\x1b[31m"
	Green   Color = "\x1b[32m"
	Yellow  Color = "\x1b[33m"
)

const reset = "\x1b[0m"

// Cell is one table cell. An empty Text prints as "-".
type Cell struct {
	Text  string
	Color Color
}

// Plain is a cell in the default colour.
func Plain(text string) Cell { return Cell{Text: text} }

// Table is a header and rows, written aligned like kubectl's tables.
type Table struct {
	Header []string
	Rows   [][]Cell
}

// Add appends a row.
func (t *Table) Add(cells ...Cell) { t.Rows = append(t.Rows, cells) }

// Write writes the table aligned, with colours when color is set.
func (t *Table) Write(w io.Writer, color bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	header := make([]Cell, len(t.Header))
	for i, h := range t.Header {
		header[i] = Plain(h)
	}
	for _, row := range append([][]Cell{header}, t.Rows...) {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteByte('\t')
			}
			line.WriteString(c.render(color))
		}
		line.WriteByte('\n')
		if _, err := io.WriteString(tw, line.String()); err != nil {
			return err
		}
	}
	return tw.Flush()
}

func (c Cell) render(color bool) string {
	text := Sanitize(c.Text)
	if text == "" {
		text = "-"
	}
	if !color {
		return text
	}
	col := c.Color
	if col == "" {
		col = Default
	}
	return string(col) + text + reset
}

// Sanitize replaces control characters, such as terminal escapes, tabs and
// newlines in server-provided text, with spaces, so that no object can move
// the cursor, recolour the terminal or break a table.
func Sanitize(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// Colorize wraps s in col when color is set.
func Colorize(s string, col Color, color bool) string {
	if !color || col == "" {
		return s
	}
	return string(col) + s + reset
}
