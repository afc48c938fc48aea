/**
 * Finds the command lines of a Markdown page's code blocks (README.md and every page of docs/),
 * for readme-commands.test.ts: every line that runs `htorder`, `npm`, `npx` or `docker`, in
 * shell-like blocks (sh, bash, shell, console with `$ ` prompts), crontab lines (the schedule is
 * dropped), systemd `ExecStart=` and the `sh -c "…"` of a Kubernetes `command:`. Usage synopses
 * and program output (blocks without a language) are not commands.
 */
export interface ReadmeCommand {
  /** The line as a shell would run it: continuations joined, comment removed, prompt removed. */
  cmd: string;
  /** Line of the page it starts on (1-based), for messages. */
  line: number;
  lang: string;
}

const PROGRAMS = /^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:\/usr\/bin\/)?(htorder|npm|npx|docker)(?:\s|$)/;

/** Removes a trailing ` # comment` that is outside quotes. */
export function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/** Splits on `&&`, `||`, `;` and `|` outside quotes: the simple commands of a line. */
export function segments(line: string): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let cur = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      cur += c;
    } else if (c === ';' || c === '|' || (c === '&' && line[i + 1] === '&')) {
      out.push(cur.trim());
      cur = '';
      if (line[i + 1] === c) i++;
    } else cur += c;
  }
  out.push(cur.trim());
  return out.filter(Boolean);
}

export const runsAProgram = (line: string): boolean => segments(line).some((s) => PROGRAMS.test(s));

export function extractCommands(readme: string): ReadmeCommand[] {
  const lines = readme.split('\n');
  const found: ReadmeCommand[] = [];
  let lang: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```(\S*)/.exec(lines[i]);
    if (fence) {
      lang = lang === null ? fence[1] : null;
      continue;
    }
    if (lang === null) continue;
    const start = i;
    let text = lines[i];
    while (/\\$/.test(text) && i + 1 < lines.length && ['sh', 'bash', 'shell', 'console'].includes(lang)) {
      text = `${text.slice(0, -1).trimEnd()} ${lines[++i].trim()}`;
    }
    let cmd: string | null = null;
    if (['sh', 'bash', 'shell'].includes(lang)) cmd = stripComment(text.trim());
    else if (lang === 'console') cmd = text.startsWith('$ ') ? stripComment(text.slice(2).trim()) : null;
    else if (lang === 'cron') cmd = /^\s*#/.test(text) ? null : text.trim().split(/\s+/).slice(5).join(' ');
    else if (lang === 'ini') cmd = /^ExecStart=(.*)$/.exec(text)?.[1] ?? null;
    else if (lang === 'yaml') cmd = /command:\s*\["sh",\s*"-c",\s*"(.*)"\]/.exec(text)?.[1] ?? null;
    if (cmd && runsAProgram(cmd)) found.push({ cmd, line: start + 1, lang });
  }
  return found;
}
