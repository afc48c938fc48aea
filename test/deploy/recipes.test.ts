import { spawnSync } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfigFile } from '../../src/core/config/config-file.js';
import { ROOT } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * The deployment recipes of deploy/ as files: the systemd units verified by systemd itself
 * (`systemd-analyze verify`, and its offline security score) where it is installed, skipped with
 * a notice elsewhere; what each unit must say checked everywhere; the compose file read as
 * compose reads it. The cron wrapper runs two nights in htorder-nightly.test.ts, the compose
 * recipe two nights in .ci/image-test.sh (podman), the whole loop in test/nights.
 */

const UNITS = ['htorder-watch.service', 'htorder-nightly.service', 'htorder-nightly.timer'];
const unitText = (name: string): Promise<string> => readFile(join(ROOT, 'deploy/systemd', name), 'utf8');

/** `Key=value` lines of a unit (the last one wins for single-valued keys; all are kept). */
function keys(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) out.set(m[1] as string, [...(out.get(m[1] as string) ?? []), m[2] as string]);
  }
  return out;
}

const hasSystemd = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' }).status === 0;

describe('deploy/systemd', () => {
  it.each(['htorder-watch.service', 'htorder-nightly.service'])(
    '%s: its own user, HTORDER_CONFIG, a state dir, limits, hardening, and no path but the install',
    async (name) => {
      const k = keys(await unitText(name));
      expect(k.get('User')).toEqual(['htorder']);
      expect(k.get('Environment')).toContain('HTORDER_CONFIG=/etc/htorder/config.yaml');
      expect(k.get('EnvironmentFile')?.[0]).toMatch(/^\/etc\/htorder\/\w+\.env$/);
      expect(k.get('StateDirectory')).toEqual(['htorder']);
      expect(k.get('StateDirectoryMode')).toEqual(['0700']);
      for (const limit of ['LimitNOFILE', 'MemoryMax', 'TasksMax']) expect(k.has(limit), limit).toBe(true);
      for (const on of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'RestrictSUIDSGID'])
        expect(k.get(on), on).toEqual(['yes']);
      expect(k.get('ProtectSystem')).toEqual(['full']);
      expect(k.get('CapabilityBoundingSet')).toEqual(['']);
      // The command is found on systemd's search path: no /usr/bin or /usr/local/bin written in.
      const exec = k.get('ExecStart')?.[0] ?? '';
      expect(exec).toMatch(/^htorder(-nightly)? /);
    },
  );

  it('the watcher restarts after a crash, not after a configuration error; the nightly run counts a held night (4) as done', async () => {
    const watch = keys(await unitText('htorder-watch.service'));
    expect(watch.get('ExecStart')).toEqual([`htorder watch \${HTORDER_WATCH_DIR}`]);
    expect(watch.get('Restart')).toEqual(['always']);
    expect(watch.get('RestartPreventExitStatus')).toEqual(['2']);
    const nightly = keys(await unitText('htorder-nightly.service'));
    expect(nightly.get('Type')).toEqual(['oneshot']);
    expect(nightly.get('SuccessExitStatus')).toEqual(['4']);
    expect(nightly.get('LogsDirectory')).toEqual(['htorder']);
    const timer = keys(await unitText('htorder-nightly.timer'));
    expect(timer.get('OnCalendar')).toEqual(['*-*-* 02:30:00', '*-*-* 03:30:00']);
    expect(timer.get('Persistent')).toEqual(['true']);
  });

  it('the environment files set what the units and the wrapper read', async () => {
    const env = async (name: string): Promise<string[]> =>
      (await readFile(join(ROOT, 'deploy/systemd', name), 'utf8'))
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => l.slice(0, l.indexOf('=')));
    expect(await env('watch.env')).toContain('HTORDER_WATCH_DIR');
    expect(await env('nightly.env')).toEqual(['HTORDER_NIGHTLY_DIR', 'HTORDER_NIGHTLY_GLOB', 'HTORDER_NIGHTLY_ARGS']);
    const wrapper = await readFile(join(ROOT, 'deploy/htorder-nightly'), 'utf8');
    for (const v of ['HTORDER_NIGHTLY_DIR', 'HTORDER_NIGHTLY_GLOB', 'HTORDER_CONFIG', 'LOGS_DIRECTORY'])
      expect(wrapper, v).toContain(v);
  });

  it.skipIf(!hasSystemd)('systemd-analyze verify finds nothing to say about the units', async () => {
    // htorder is not installed here: each unit's command word becomes a stub at an absolute path,
    // the only change, so that verify can check that it is executable.
    const dir = await tempDirPerTest('htorder-units-');
    for (const bin of ['htorder', 'htorder-nightly']) {
      await writeFile(join(dir, bin), '#!/bin/sh\n');
      await chmod(join(dir, bin), 0o755);
    }
    for (const name of UNITS) {
      const text = (await unitText(name)).replace(/^ExecStart=(htorder[-a-z]*)/m, `ExecStart=${dir}/$1`);
      await writeFile(join(dir, name), text);
    }
    const r = spawnSync('systemd-analyze', ['verify', ...UNITS.map((u) => join(dir, u))], { encoding: 'utf8' });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
    // systemd's own measure of the hardening (0 = most confined, 10 = not at all).
    const security = spawnSync('systemd-analyze', ['security', '--offline=yes', join(dir, 'htorder-watch.service')], {
      encoding: 'utf8',
    });
    const level = /Overall exposure level for htorder-watch\.service: ([\d.]+)/.exec(security.stdout)?.[1];
    if (level === undefined) {
      process.stderr.write('systemd-analyze security --offline is not available here: the score is not checked\n');
      return;
    }
    expect(Number(level)).toBeLessThanOrEqual(2.5);
  });

  it.runIf(!hasSystemd)('systemd-analyze is not installed here: the units are not verified by systemd', () => {
    process.stderr.write('systemd-analyze is not installed: deploy/systemd is checked as text only\n');
  });
});

describe('deploy/etc/config.yaml', () => {
  it('is a config file htorder reads: the account, the limits, and the state dir the units make', async () => {
    const file = join(ROOT, 'deploy/etc/config.yaml');
    const config = parseConfigFile(await readFile(file, 'utf8'), file);
    expect(config.settings).toMatchObject({ clientSecretFile: 'secret', maxJobCost: 500 });
    // StateDirectory=htorder is /var/lib/htorder: `htorder approve` with this file finds the services' ledger.
    expect(config.settings.stateDir).toBe('/var/lib/htorder');
    expect(Object.keys(config.profiles)).toEqual([]);
  });
});

describe('deploy/compose.yaml', () => {
  it('builds the local image from this repository, with volumes for the drop folder and the state', async () => {
    const compose = parse(await readFile(join(ROOT, 'deploy/compose.yaml'), 'utf8'));
    const watch = compose.services.watch;
    expect(watch.build.context).toBe('..');
    expect((await readFile(join(ROOT, 'deploy', watch.build.context, 'Dockerfile'), 'utf8')).length).toBeGreaterThan(0);
    expect(watch.image).toBe(`\${HTORDER_IMAGE:-localhost/htorder:local}`);
    // Strings, not lists: podman-compose appends a list of an override to the base file's.
    expect(watch.command).toBe('watch /data/drop');
    expect(watch.environment.HTORDER_CONFIG).toBe('/etc/htorder/config.yaml');
    const targets = (watch.volumes as string[]).map((v) => /:(\/[^:]+)(?::ro)?$/.exec(v)?.[1]);
    expect(targets).toEqual(['/data/drop', '/data/state', '/etc/htorder']);
    expect(Object.keys(compose.volumes)).toEqual(['htorder-state']);
    const sandbox = parse(await readFile(join(ROOT, 'deploy/compose.sandbox.yaml'), 'utf8'));
    expect(sandbox.services.watch.command).toBe('watch --sandbox /data/drop');
  });
});
