package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Completion scripts for urfave/cli's --generate-bash-completion protocol,
// after the ones urfave/cli ships in its autocomplete directory.
const bashCompletion = `# bash completion for ksync; load with: source <(ksync completion bash)
_ksync_complete() {
  local cur words cword request
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n "=:" || return
  else
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi
  words=("${words[@]:0:$cword}")
  if [[ "$cur" == "-"* ]]; then
    request="${words[*]} ${cur} --generate-bash-completion"
  else
    request="${words[*]} --generate-bash-completion"
  fi
  COMPREPLY=($(compgen -W "$(eval "${request}" 2>/dev/null)" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -o nospace -F _ksync_complete ksync
`

const zshCompletion = `#compdef ksync
# zsh completion for ksync; load with: source <(ksync completion zsh)
_ksync() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _ksync ksync
`

func completionCommand() *cli.Command {
	scripts := map[string]string{"bash": bashCompletion, "zsh": zshCompletion}
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script",
		ArgsUsage: "bash|zsh",
		Description: "Load completion in the current shell with\n" +
			"  source <(ksync completion bash)\n  source <(ksync completion zsh)",
		BashComplete: func(c *cli.Context) {
			if c.NArg() == 0 {
				fmt.Fprintln(c.App.Writer, "bash\nzsh")
			}
		},
		Action: func(c *cli.Context) error {
			script, ok := scripts[c.Args().First()]
			if c.NArg() != 1 || !ok {
				return usageError{fmt.Errorf("completion takes one shell, bash or zsh, got %q", c.Args().Slice())}
			}
			_, err := fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

// completeCommands completes the command name. urfave/cli's default looks
// at os.Args rather than the arguments of this run.
func completeCommands(c *cli.Context) {
	for _, cmd := range c.App.VisibleCommands() {
		fmt.Fprintln(c.App.Writer, cmd.Name)
	}
}

// completeApplications completes the Application argument with the names
// of the Applications in the namespace, and flags as urfave/cli does.
// Completion must stay quiet, so errors print nothing.
func (e *env) completeApplications(c *cli.Context) {
	if n := len(e.args); n > 2 && strings.HasPrefix(e.args[n-2], "-") {
		cli.DefaultCompleteWithFlags(c.Command)(c)
		return
	}
	if c.NArg() > 0 {
		return
	}
	k8s, namespace, err := e.connect(c)
	if err != nil {
		return
	}
	list := &syncv1.ApplicationList{}
	if err := k8s.List(c.Context, list, client.InNamespace(namespace)); err != nil {
		return
	}
	for _, app := range list.Items {
		fmt.Fprintln(c.App.Writer, app.Name)
	}
}
