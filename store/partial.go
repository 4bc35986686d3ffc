package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrDestinationBusy is returned by StartPartial, and so by tract's Copy
// and Salvage, when another copy or salvage into the same destination
// file is running: its partial file, beside the destination, is open.
var ErrDestinationBusy = errors.New("another copy or salvage into it is running")

// LeftoverError is returned by StartPartial (tract's Copy and Salvage)
// when the partial file a killed copy or salvage left beside the
// destination cannot be removed.
// Removing the file by hand lets the next one run.
type LeftoverError struct {
	// Path is the partial file.
	Path string
	// Err is why it could not be removed.
	Err error
}

func (e *LeftoverError) Error() string {
	return fmt.Sprintf("cannot remove %s, which a killed copy or salvage left: %v", e.Path, e.Err)
}

func (e *LeftoverError) Unwrap() error { return e.Err }

// partialInfix is in the name of every partial file: ".DST" + partialInfix
// + 16 hex digits, in DST's directory.
const partialInfix = ".tract-partial-"

// PartialFile is a repository file that a copy or a salvage writes under
// a temporary name beside its destination (Path) and puts in place whole
// at the end (Place), so that an interrupted run leaves the destination
// as it was. Partial files of killed runs are recognised by their name
// and by nobody having them open, and removed by the next run into the
// same destination (StartPartial).
type PartialFile struct {
	dst, tmp string
	// replace is set when dst is an empty file that the result replaces;
	// otherwise dst must still not exist at the end.
	replace bool
}

// StartPartial removes the partial files that killed runs into dst left,
// and names a new one. It fails with ErrDestinationBusy when one is open
// (a run into dst is going on), and with a *LeftoverError when one
// cannot be removed.
func StartPartial(dst string, replace bool) (*PartialFile, error) {
	dir, prefix := filepath.Dir(dst), "."+filepath.Base(dst)+partialInfix
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		busy, err := FileInUse(path)
		if err != nil {
			return nil, &LeftoverError{Path: path, Err: err}
		}
		if busy {
			return nil, fmt.Errorf("%w (%s is open)", ErrDestinationBusy, path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, &LeftoverError{Path: path, Err: err}
		}
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return &PartialFile{dst: dst, tmp: filepath.Join(dir, prefix+hex.EncodeToString(b[:])), replace: replace}, nil
}

// Path is the partial file's name: the file to write the repository to.
func (p *PartialFile) Path() string { return p.tmp }

// Place puts the finished partial file in place of dst: it syncs the
// file, links it to dst (which must still not exist) or renames it over
// the empty file dst was, and syncs the directory, so that dst is the
// whole repository or what it was, even across a crash. On failure the
// partial file is removed.
func (p *PartialFile) Place() error {
	err := syncPath(p.tmp)
	if err == nil {
		err = p.link()
	}
	if err == nil {
		err = syncPath(filepath.Dir(p.dst))
	}
	if err != nil {
		p.Discard()
		return err
	}
	return nil
}

// link gives the partial file the name dst.
func (p *PartialFile) link() error {
	if p.replace {
		return os.Rename(p.tmp, p.dst)
	}
	// A hard link fails when dst appeared meanwhile (another copy
	// finished first), where a rename would replace it.
	err := os.Link(p.tmp, p.dst)
	switch {
	case err == nil:
		return os.Remove(p.tmp)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s appeared while this ran: %w", p.dst, ErrExists)
	}
	// A file system without hard links: rename, when dst is still free.
	if _, serr := os.Lstat(p.dst); serr == nil {
		return fmt.Errorf("%s appeared while this ran: %w", p.dst, ErrExists)
	}
	return os.Rename(p.tmp, p.dst)
}

// Discard removes the partial file; the destination stays as it was.
func (p *PartialFile) Discard() { _ = os.Remove(p.tmp) }

// Named returns err with the partial file's name replaced by dst's in
// its message, so that errors name the file the user gave; errors.Is and
// errors.As still see err.
func (p *PartialFile) Named(err error) error {
	if err == nil || !strings.Contains(err.Error(), p.tmp) {
		return err
	}
	return &renamedError{err: err, msg: strings.ReplaceAll(err.Error(), p.tmp, p.dst)}
}

// renamedError is an error with another message.
type renamedError struct {
	err error
	msg string
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// syncPath fsyncs the file or directory at path.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
