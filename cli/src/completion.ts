import { UsageError } from './errors.js';
import { EXIT } from './exit.js';
import { RESOURCE_TYPES } from './resources.js';

export const COMPLETION_USAGE = 'vtl completion bash';
export const COMPLETION_HELP = `Prints a bash completion script: commands, kinds, options, and the names of objects (read
from the appliance with \`vtl get KIND -o name\`). Load it with
  source <(vtl completion bash)
or save it to /etc/bash_completion.d/vtl.
`;

/** The words bash completes: each command with its options. */
export type CommandWords = Record<string, string[]>;

/** `vtl completion bash`: the script, from the commands' own names and options. */
export function completion(argv: string[], commands: CommandWords, out: NodeJS.WritableStream): number {
  const [shell, extra] = argv;
  if (shell !== 'bash' || extra !== undefined)
    throw new UsageError(
      shell ? `No completion for "${shell}": bash only.` : 'Name the shell: bash.',
      COMPLETION_USAGE,
      'completion',
    );
  const kinds = RESOURCE_TYPES.map((t) => t.plural).join(' ');
  const options = Object.entries(commands)
    .map(([name, opts]) => `    ${name}) opts="${opts.join(' ')}" ;;`)
    .join('\n');
  out.write(`# bash completion for vtl (vtl completion bash)
_vtl() {
  local cur prev cmd opts
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd="\${COMP_WORDS[1]}"
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${Object.keys(commands).join(' ')}" -- "$cur"))
    return
  fi
  case "$prev" in
    -f|--filename) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    -o|--output) COMPREPLY=($(compgen -W "json yaml wide name" -- "$cur")); return ;;
    --ca) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  if [[ "$cur" != -* ]]; then
    case "$cmd" in
      get|describe|delete)
        if [ "$COMP_CWORD" -eq 2 ]; then
          COMPREPLY=($(compgen -W "${kinds}" -- "$cur"))
          return
        fi
        if [ "$COMP_CWORD" -eq 3 ]; then
          local names
          names=$("\${COMP_WORDS[0]}" get "\${COMP_WORDS[2]}" -o name 2>/dev/null | sed 's|^[^/]*/||')
          COMPREPLY=($(compgen -W "$names" -- "$cur"))
          return
        fi ;;
      completion) COMPREPLY=($(compgen -W "bash" -- "$cur")); return ;;
      help) COMPREPLY=($(compgen -W "${Object.keys(commands).join(' ')}" -- "$cur")); return ;;
    esac
  fi
  case "$cmd" in
${options}
    *) opts="" ;;
  esac
  COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
}
complete -F _vtl vtl
`);
  return EXIT.ok;
}
