package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// wholeFile is a file written whole or not at all (-o of export and
// graph): the writes go to a temporary file beside the target, which
// commit syncs and renames over it and abort removes. A file the target
// replaces keeps its permissions; a new one gets the mode the command
// chose.
type wholeFile struct {
	*os.File
	name string
	mode fs.FileMode
	// forget unregisters the removal of the temporary file that a second
	// Ctrl-C does (see interrupts).
	forget func()
}

// createWhole starts writing name. A name that is a directory is refused
// here, before anything is written, instead of failing at the rename. A
// second Ctrl-C (in) removes the temporary file before it exits.
func createWhole(in *interrupts, name string, mode fs.FileMode) (*wholeFile, error) {
	if st, err := os.Stat(name); err == nil {
		if st.IsDir() {
			return nil, usageErrorf("write %s: it is a directory: name a file, such as %s", name, filepath.Join(name, "out"))
		}
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(name)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		// Name the directory, not the temporary file the user never asked for.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("write %s: cannot create a file in %s: %w", name, dir, err)
	}
	forget := in.onHardExit(func() { os.Remove(tmp.Name()) })
	return &wholeFile{File: tmp, name: name, mode: mode, forget: forget}, nil
}

// commit puts the written file in place of the target.
func (w *wholeFile) commit() error {
	defer w.forget()
	err := w.Chmod(w.mode)
	if serr := w.Sync(); err == nil {
		err = serr
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.Name(), w.name)
	}
	if err != nil {
		os.Remove(w.Name())
		return fmt.Errorf("write %s: %w", w.name, err)
	}
	return nil
}

// abort removes what was written; the target stays as it was.
func (w *wholeFile) abort() {
	defer w.forget()
	w.Close()
	os.Remove(w.Name())
}

// writeFileWhole writes name with write through a wholeFile.
func writeFileWhole(in *interrupts, name string, mode fs.FileMode, write func(io.Writer) error) error {
	w, err := createWhole(in, name, mode)
	if err != nil {
		return err
	}
	if err := write(w); err != nil {
		w.abort()
		return err
	}
	return w.commit()
}
