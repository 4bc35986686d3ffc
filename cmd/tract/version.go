package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version from the build info is used.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// versionLine is what 'tract version' and 'tract --version' print.
func versionLine() string {
	return fmt.Sprintf("tract %s (%s %s/%s, schema %d)", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, tract.SchemaVersion)
}

func newCmdVersion(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print tract's version",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			v := map[string]any{"version": buildVersion(), "go": runtime.Version(),
				"os": runtime.GOOS, "arch": runtime.GOARCH, "schema": tract.SchemaVersion}
			if asJSON {
				return writeJSON(f.IO.Out, v)
			}
			fmt.Fprintln(f.IO.Out, versionLine())
			return nil
		},
	}
	addJSONFlag(cmd, &asJSON, "print JSON", "version")
	return cmd
}
