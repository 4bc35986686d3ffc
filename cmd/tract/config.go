package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract/internal/config"
)

// ConfigOptions are the inputs of 'tract config'.
type ConfigOptions struct {
	Factory *Factory
	// Action is set, get, unset or list; Key and Value its arguments.
	Action     string
	Key, Value string
	JSON       bool
}

func newCmdConfig(f *Factory, runF func(*ConfigOptions) error) *cobra.Command {
	var keyHelp strings.Builder
	for _, k := range config.Keys() {
		// A setting's lines fit an 80-column terminal.
		help := fmt.Sprintf("%s ($%s)", k.Help, k.Env)
		fmt.Fprintf(&keyHelp, "  %-8s %s\n", k.Name, wrap(help, 69, strings.Repeat(" ", 11)))
	}
	cmd := &cobra.Command{
		Use:   "config set|get|unset|list [KEY [VALUE]]",
		Short: "Set your default model, provider and system prompt",
		Long: `Read and write your settings: the model, system prompt and provider chat,
the interactive chat and compress use when no flag gives them, and how long
a model call waits (a flag wins over the environment variable named below,
which wins over the setting). Settings are per user, in $TRACT_CONFIG or
tract/config.json in your configuration directory, never in a repository;
API keys stay in the environment.

Settings:
` + strings.TrimRight(keyHelp.String(), "\n"),
		Example: `  tract config set model llama3.2
  tract config set system "Answer briefly."
  tract config get model
  tract config list
  tract config unset system`,
	}
	run := func(action string, args cobra.PositionalArgs, jsonFlag bool) *cobra.Command {
		opts := &ConfigOptions{Factory: f, Action: action}
		c := &cobra.Command{
			Args: args,
			RunE: func(cmd *cobra.Command, a []string) error {
				if len(a) > 0 {
					opts.Key = a[0]
				}
				if len(a) > 1 {
					opts.Value = a[1]
				}
				if runF != nil {
					return runF(opts)
				}
				return configRun(opts)
			},
		}
		if jsonFlag {
			addJSONFlag(c, &opts.JSON, "print the settings as a JSON object", "config list")
		}
		return c
	}
	set := run("set", exactArgs(2, "a KEY and a VALUE"), false)
	set.Use, set.Short = "set KEY VALUE", "Set a setting"
	get := run("get", exactArgs(1, "a KEY"), false)
	get.Use, get.Short = "get KEY", "Print a setting's value (exit 1 when it is not set)"
	unset := run("unset", exactArgs(1, "a KEY"), false)
	unset.Use, unset.Short = "unset KEY", "Remove a setting"
	list := run("list", exactArgs(0, "no arguments"), true)
	list.Use, list.Short = "list [--json]", "Print every setting as KEY=VALUE"
	cmd.AddCommand(set, get, unset, list)
	return cmd
}

// errNotSet is 'tract config get' of a setting that is not set.
var errNotSet = errors.New("not set")

func configRun(opts *ConfigOptions) error {
	f := opts.Factory
	if opts.Key != "" {
		if _, err := config.Lookup(opts.Key); err != nil {
			return &usageError{err}
		}
	}
	file, err := f.config()
	if err != nil {
		return err
	}
	switch opts.Action {
	case "set":
		if err := file.Set(opts.Key, opts.Value); err != nil {
			return &usageError{err}
		}
		return file.Save()
	case "unset":
		if was, _ := file.Unset(opts.Key); !was {
			fmt.Fprintf(f.IO.ErrOut, "%s was not set; nothing changed\n", opts.Key)
			return nil
		}
		return file.Save()
	case "get":
		v, ok := file.Get(opts.Key)
		if !ok {
			return fmt.Errorf("config: %s is %w (in %s)", opts.Key, errNotSet, file.Path())
		}
		fmt.Fprintln(f.IO.Out, v)
		return nil
	}
	if opts.JSON {
		m := map[string]string{}
		for _, k := range file.Settings() {
			m[k], _ = file.Get(k)
		}
		return writeJSON(f.IO.Out, m)
	}
	for _, k := range file.Settings() {
		v, _ := file.Get(k)
		fmt.Fprintf(f.IO.Out, "%s=%s\n", k, strings.ReplaceAll(v, "\n", `\n`))
	}
	return nil
}

// config loads the settings file.
func (f *Factory) config() (*config.File, error) {
	path, err := config.DefaultPath(f.Getenv)
	if err != nil {
		return nil, err
	}
	return config.Load(path)
}

// setting returns the value of the setting key for a flag's value: the
// flag when given, else the key's environment variable, else the settings
// file, else "".
func (f *Factory) setting(key, flag string) (string, error) {
	v, _, err := f.settingFrom(key, flag)
	return v, err
}

// settingFrom is setting, and says where the value came from: the flag
// (named as the key is: --model), the environment variable, or "'tract
// config set KEY'"; "" when no value is set.
func (f *Factory) settingFrom(key, flag string) (value, origin string, err error) {
	if flag != "" {
		return flag, "--" + key, nil
	}
	k, err := config.Lookup(key)
	if err != nil {
		return "", "", err
	}
	if v := f.Getenv(k.Env); v != "" {
		return v, k.Env, nil
	}
	file, err := f.config()
	if err != nil {
		return "", "", err
	}
	if v, _ := file.Get(key); v != "" {
		return v, "'tract config set " + key + "'", nil
	}
	return "", "", nil
}
