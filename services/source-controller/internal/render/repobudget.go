package render

// The render's input budget: every byte read from the repository or
// unpacked from an archive counts against MaxInputBytes.

import (
	"io"
)

// MaxInputBytes caps what one render reads: repository files, chart files
// and the unpacked content of vendored chart archives together. A chart
// whose archives unpack far larger than they are packed stops here.
const MaxInputBytes = 64 << 20

// spend takes n bytes from the budget, failing once the render has read more
// than MaxInputBytes.
func (r *repoFS) spend(file string, n int64) error {
	if n > r.budget {
		return renderFailed(file, "reading it takes the render past %d bytes of input", MaxInputBytes)
	}
	r.budget -= n
	return nil
}

// consume reads rd (the unpacked content of an archive) into memory,
// counting it against the budget.
func (r *repoFS) consume(file string, rd io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(rd, r.budget+1))
	if err != nil {
		return nil, renderFailed(file, "%w", err)
	}
	if err := r.spend(file, int64(len(data))); err != nil {
		return nil, renderFailed(file, "unpacking it takes the render past %d bytes of input", MaxInputBytes)
	}
	return data, nil
}
