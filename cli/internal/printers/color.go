package printers

import (
	"io"
	"os"

	"golang.org/x/term"
)

// ColorEnabled reports whether output to w may be coloured: only when w is
// a terminal and NO_COLOR is not set (https://no-color.org), whatever its value.
func ColorEnabled(w io.Writer, lookupEnv func(string) (string, bool)) bool {
	if _, set := lookupEnv("NO_COLOR"); set {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
