package sops

import (
	"slices"
	"sync"
)

// Withholder is the Decryptor of a render that may not decrypt, a preview
// without spec.previews.decrypt: plain files pass through, SOPS documents
// are left out of the render (read as empty) and remembered, so the plan
// can say what it did not see. It is safe for concurrent use.
type Withholder struct {
	mu    sync.Mutex
	files []string
}

// Decrypt returns data unchanged unless it is a SOPS document, which it
// records and replaces with nothing.
func (w *Withholder) Decrypt(path string, data []byte) ([]byte, error) {
	if !isSOPSDocument(data) {
		return data, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Contains(w.files, path) {
		w.files = append(w.files, path)
	}
	return []byte{}, nil
}

// Files lists the SOPS files left out, sorted.
func (w *Withholder) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(slices.Values(w.files))
}
