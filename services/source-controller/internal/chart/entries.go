package chart

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
)

// CheckEntries reads a chart archive's tar stream (gunzipped) and refuses
// it unless every entry is a regular file or a directory. Helm's loader
// reads a symbolic link, a hard link or a device as an empty file of the
// link's name; refusing them says what the archive holds instead of
// rendering a chart that silently lacks the file.
func CheckEntries(tarStream io.Reader) error {
	tr := tar.NewReader(tarStream)
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		switch hd.Typeflag {
		case tar.TypeReg, tar.TypeDir, tar.TypeXGlobalHeader:
		case tar.TypeSymlink:
			return fmt.Errorf("archive entry %q is a symbolic link to %q; chart archives may hold only files and directories", hd.Name, hd.Linkname)
		case tar.TypeLink:
			return fmt.Errorf("archive entry %q is a hard link to %q; chart archives may hold only files and directories", hd.Name, hd.Linkname)
		default:
			return fmt.Errorf("archive entry %q is of tar type %q, not a file or a directory; chart archives may hold only files and directories", hd.Name, hd.Typeflag)
		}
	}
}
