import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { CONNECTION_SETTINGS, WATCH_SETTINGS, addSettingOptions } from '../../../src/core/config/config-flags.js';
import { parseConfigFile } from '../../../src/core/config/config-file.js';
import {
  PROFILE_SETTINGS,
  SETTINGS,
  SETTING_NAMES,
  setting,
  type SettingName,
} from '../../../src/core/config/settings.js';
import { ROOT } from '../../support/dist.js';
import { buildProgram } from '../../../src/cli/program.js';

/**
 * The table of settings in src/core/config/settings.ts and the one in docs/configuration.md are the
 * same list, row for row: a setting added, renamed or re-limited in one and not the other fails
 * here. And no `HTORDER_*` variable is read anywhere in src/ that the table does not list.
 */

const DOC = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');

interface DocRow {
  name: string;
  env: string;
  flag: string;
  profile: string;
  value: string;
  default: string;
}

/** The rows of the table under `## Settings`: `| \`name\` | env | flag | profile | value | default | meaning |`. */
function docRows(): DocRow[] {
  const section = DOC.slice(DOC.indexOf('\n## Settings\n'));
  const body = section.slice(0, section.indexOf('\n## ', 1));
  return body
    .split('\n')
    .filter((l) => /^\| `\w+` \|/.test(l))
    .map((l) => {
      const cells = l.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim());
      const unquote = (c: string): string => c.replace(/^`|`$/g, '');
      const [name, env, flag, profile, value, dflt] = cells;
      return { name: unquote(name), env: unquote(env), flag: unquote(flag), profile, value, default: dflt };
    });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('the settings table', () => {
  const rows = docRows();
  const byName = new Map(rows.map((r) => [r.name, r]));

  it('docs/configuration.md lists every setting of the code, and nothing else, once', () => {
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.map((r) => r.name).sort()).toEqual([...SETTING_NAMES].sort());
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
  });

  it.each(SETTING_NAMES)('%s: variable, flag, profile key, limits and default agree with the code', (name) => {
    const s = setting(name);
    const row = byName.get(name);
    expect(row, `${name} is not in docs/configuration.md`).toBeDefined();
    if (!row) return;
    expect(row.env).toBe(s.env);
    expect(row.flag).toBe(s.flag ?? '—');
    expect(row.profile).toBe(s.profile === false ? 'no' : 'yes');
    if (s.type.kind === 'integer' || s.type.kind === 'milliseconds')
      expect(row.value).toContain(`${s.type.min}–${s.type.max}`);
    if (s.type.kind === 'boolean') expect(row.value).toBe('true or false');
    if (s.required) expect(row.default).toBe('required');
    else if (s.default !== undefined) expect(row.default).toBe(`\`${String(s.default)}\``);
  });

  it('every HTORDER_ variable named in src/ is a setting of the table (or a help text about them all)', () => {
    const known = new Set<string>(SETTING_NAMES.map((n) => SETTINGS[n].env));
    const unknown: string[] = [];
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/HTORDER_[A-Z0-9_]*/g)) {
        if (m[0] === 'HTORDER_' || known.has(m[0])) continue;
        unknown.push(`${file.slice(ROOT.length)}: ${m[0]}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('outside src/core/config no code reads or sets an HTORDER_ variable (only help text names them)', () => {
    const reads = /\benv\s*(?:\.|\[\s*['"`])HTORDER_|(?:^|[{,])\s*HTORDER_[A-Z0-9_]+\s*:/;
    const offenders: string[] = [];
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      if (file.includes('/src/core/config/')) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (reads.test(line)) offenders.push(`${file.slice(ROOT.length)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it('profile keys are exactly the settings a profile may set', () => {
    expect([...PROFILE_SETTINGS].sort()).toEqual(SETTING_NAMES.filter((n) => setting(n).profile !== false).sort());
    expect(PROFILE_SETTINGS).not.toContain('profile');
    expect(PROFILE_SETTINGS).not.toContain('config');
    expect(() => parseConfigFile('profiles:\n  p:\n    config: x.yaml\n', '/c.yaml')).toThrow('unknown key "config"');
  });

  it('every flag of the table is offered by a command, spelt as in the table', () => {
    const offered = new Set<SettingName>([...CONNECTION_SETTINGS, ...WATCH_SETTINGS]);
    const withFlag = SETTING_NAMES.filter((n) => setting(n).flag !== undefined);
    expect(withFlag.filter((n) => !offered.has(n))).toEqual([]);
    // The daemon takes them all.
    const watch = buildProgram().commands.find((c) => c.name() === 'watch');
    const watchFlags = new Set(watch?.options.map((o) => o.long));
    expect(withFlag.filter((n) => !watchFlags.has(setting(n).flag ?? ''))).toEqual([]);
    const cmd = addSettingOptions(new Command('x'), withFlag);
    expect(cmd.options.map((o) => o.long).sort()).toEqual(withFlag.map((n) => setting(n).flag).sort());
  });
});
