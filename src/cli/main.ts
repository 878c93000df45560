// The CLI shell: declares commands and flags, loads each command lazily, maps errors to exit
// codes in one place. Commands live in ./commands/<name>.ts and never call process.exit.
import { Command, CommanderError, Option } from 'commander';
import { ExitCode, KwaveError } from '../errors.js';
import { kwaveVersion } from '../version.js';
import { processIO, type CliIO, type CommandContext, type CommonOptions } from './context.js';
import { renderError } from './render.js';
import { inClusterDefaults, METRICS_ADDRESS, runsInPod } from './inClusterDefaults.js';
import { wrapKube } from '../cluster/kubeError.js';

type Handler = (ctx: CommandContext, args: string[], opts: Record<string, unknown>) => Promise<number>;

/** Which of the common flags a command acts on: `cluster` (--kubeconfig, --context), `metrics` (--metrics-address, --pushgateway). */
interface Honours {
  cluster?: boolean;
  metrics?: boolean;
}

/**
 * The common flags (docs/cli.md). Every command accepts them all, so one set of flags can be passed
 * to any command, but its --help lists only those it acts on.
 */
function commonOptions(cmd: Command, honours: Honours): Command {
  return cmd
    .addOption(
      new Option(
        '--kubeconfig <path>',
        'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)',
      ).hideHelp(!honours.cluster),
    )
    .addOption(new Option('--context <name>', 'kubeconfig context to use').hideHelp(!honours.cluster))
    .addOption(
      new Option(
        '--insecure-send-credentials-over-http',
        "send the kubeconfig's token, key or password to an http:// API server (refused otherwise)",
      ).hideHelp(!honours.cluster),
    )
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(
      new Option('--metrics-address <host:port>', 'serve Prometheus metrics here (in a pod: 0.0.0.0:9464), or "off"')
        .default(METRICS_ADDRESS)
        .hideHelp(!honours.metrics),
    )
    .addOption(
      new Option('--pushgateway <url>', 'push metrics to this Pushgateway at wave ends and exit').hideHelp(
        !honours.metrics,
      ),
    )
    .addOption(
      new Option(
        '--kube-api-qps <n>',
        "client-side limit of API requests per second, 0 = none (default: the plan's, else 5000)",
      ).hideHelp(!honours.cluster),
    )
    .addOption(
      new Option(
        '--kube-api-burst <n>',
        "API requests that may go at once after a quiet spell (default: the plan's, else 10000)",
      ).hideHelp(!honours.cluster),
    );
}

function optionalNumber(
  value: unknown,
  flag: string,
  check: (n: number) => boolean,
  expected: string,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (String(value).trim() === '' || !check(n))
    throw new KwaveError('USAGE', `${flag}: expected ${expected}, found "${String(value)}"`);
  return n;
}

/** --pushgateway: an http(s) URL without credentials (a command line shows in `ps` and shell history). */
function pushgatewayFlag(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new KwaveError('USAGE', '--pushgateway: expected an http:// or https:// URL, found something else');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new KwaveError('USAGE', `--pushgateway: expected an http:// or https:// URL, found a ${url.protocol} URL`);
  if (url.username || url.password)
    throw new KwaveError(
      'USAGE',
      '--pushgateway: expected a URL without a user or password in it, found credentials (a command line shows in ps and shell history)',
    );
  return String(value);
}

function pickCommon(opts: Record<string, unknown>, command: Command, io: CliIO): CommonOptions {
  const kubeconfig = opts.kubeconfig as string | undefined;
  const defaults = inClusterDefaults({
    inCluster: runsInPod(kubeconfig, io.env),
    stdoutIsTTY: io.stdout.isTTY === true,
    outputGiven: command.getOptionValueSource('output') !== 'default',
    metricsAddressGiven: command.getOptionValueSource('metricsAddress') !== 'default',
  });
  return {
    kubeconfig,
    context: opts.context as string | undefined,
    output: defaults.output ?? (opts.output as 'text' | 'json' | undefined) ?? 'text',
    metricsAddress: defaults.metricsAddress ?? (opts.metricsAddress as string | undefined) ?? METRICS_ADDRESS,
    pushgateway: pushgatewayFlag(opts.pushgateway),
    allowCredentialsOverHttp: opts.insecureSendCredentialsOverHttp === true,
    kubeApiQps: optionalNumber(
      opts.kubeApiQps,
      '--kube-api-qps',
      (n) => Number.isFinite(n) && n >= 0,
      'a number of requests per second, 0 or more',
    ),
    kubeApiBurst: optionalNumber(
      opts.kubeApiBurst,
      '--kube-api-burst',
      (n) => Number.isInteger(n) && n >= 1,
      'a whole number of requests, 1 or more',
    ),
  };
}

/** Declares every command (docs/cli.md); `load` imports the module that carries it out. */
export function buildProgram(io: CliIO, setResult: (p: Promise<number>) => void): Command {
  const program = new Command('kwave')
    .description('Upgrade container images of running Kubernetes pods in place, in waves, from a YAML plan.')
    .version(kwaveVersion())
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();

  const add = (
    name: string,
    description: string,
    honours: Honours,
    load: () => Promise<{ run: Handler }>,
    setup?: (c: Command) => void,
  ) => {
    const cmd = commonOptions(program.command(name).description(description), honours);
    setup?.(cmd);
    cmd.action((...raw: unknown[]) => {
      const command = raw[raw.length - 1] as Command;
      const opts = command.opts();
      const args = command.args;
      setResult(
        Promise.resolve().then(async () =>
          (await load()).run({ io, common: pickCommon(opts, command, io) }, args, opts),
        ),
      );
    });
  };

  add(
    'validate',
    'check plan files against the plan format; exit 2 if any is invalid',
    {},
    () => import('./commands/validate.js'),
    (c) => c.argument('<plan...>', 'plan files'),
  );
  add(
    'plan',
    'dry run: pods per wave, skipped pods and problems; writes nothing',
    { cluster: true },
    () => import('./commands/plan.js'),
    (c) =>
      c.argument('<plan>', 'plan file').option('--all', 'list every pod and problem (text output shortens long lists)'),
  );
  add(
    'run',
    'carry out a plan: upgrade pods in place, wave by wave',
    { cluster: true, metrics: true },
    () => import('./commands/run.js'),
    (c) =>
      c
        .argument('<plan>', 'plan file')
        .option('--force', 'roll back pods another revision of this plan left mid-flight, then run')
        .option(
          '--retry',
          'run again a revision whose last run halted: upgrade its failed pods anew (without it, a halted revision stays halted)',
        )
        .option('--metrics-linger <duration>', 'after the end, serve metrics until scraped once or this long', '10s')
        .option(
          '--lease-wait <duration>',
          "when another runner holds the plan's lease, wait this long for it to be released or expire before refusing (a Job's retry after its pod died)",
          '0s',
        ),
  );
  add(
    'status',
    "show a rollout's phase, wave, counts, pods in flight and gates",
    { cluster: true },
    () => import('./commands/status.js'),
    (c) =>
      c
        .argument('<plan>', 'plan file')
        .option('--watch', 'follow live')
        .option('--cluster <name>', "a multi-cluster plan's cluster to show (default: every cluster of the plan)"),
  );
  add(
    'approve',
    'approve the approval gate of a wave',
    { cluster: true },
    () => import('./commands/approve.js'),
    (c) =>
      c
        .argument('<plan>', 'plan file')
        .option('--wave <n>', 'wave to approve (default: the one waiting)')
        .option(
          '--cluster <name>',
          "a multi-cluster plan's cluster to approve in (default: the one waiting; with --wave and none waiting, every cluster of the plan)",
        ),
  );
  const control = (action: 'pause' | 'resume' | 'abort') => () =>
    import('./commands/control.js').then((m) => ({ run: m.runFor(action) }));
  const clusterFlag =
    "a multi-cluster plan's cluster (spec.clusters name) to act on (default: every cluster of the plan)";
  add(
    'pause',
    'pause a rollout or rollback wherever it runs: no new pod starts, pods in flight finish, the runner waits (through the rollout record)',
    { cluster: true },
    control('pause'),
    (c) => c.argument('<plan>', 'plan file').option('--cluster <name>', clusterFlag),
  );
  add(
    'resume',
    'resume a paused rollout or rollback (through the rollout record)',
    { cluster: true },
    control('resume'),
    (c) => c.argument('<plan>', 'plan file').option('--cluster <name>', clusterFlag),
  );
  add(
    'abort',
    "halt a running rollout wherever it runs, as on a failure, and apply the plan's rollback policy; a running rollback stops reverting (the runner exits 3)",
    { cluster: true },
    control('abort'),
    (c) => c.argument('<plan>', 'plan file').option('--cluster <name>', clusterFlag),
  );
  add(
    'rollback',
    'revert in place every pod this plan upgraded',
    { cluster: true, metrics: true },
    () => import('./commands/rollback.js'),
    (c) =>
      c
        .argument('<plan>', 'plan file')
        .option('--metrics-linger <duration>', 'after the end, serve metrics until scraped once or this long', '10s')
        .option(
          '--lease-wait <duration>',
          "when another runner holds the plan's lease, wait this long for it to be released or expire before refusing",
          '0s',
        ),
  );
  add(
    'dashboard',
    "serve a web page of the namespaces' rollouts, live, with approve / pause / resume / abort (as you, through the rollout records)",
    { cluster: true },
    () => import('./commands/dashboard.js'),
    (c) =>
      c
        .option(
          '--address <host:port>',
          'where to listen; beyond loopback the page requires the access token printed with its URL',
          '127.0.0.1:8080',
        )
        .option(
          '--namespace <ns...>',
          "namespaces whose rollouts to show (repeatable; default: the kubeconfig context's namespace)",
        ),
  );
  add(
    'adopt',
    'set the readiness-gate condition True on pods that declare the gate but lack it',
    { cluster: true },
    () => import('./commands/adopt.js'),
    (c) =>
      c
        .requiredOption('-n, --namespace <ns>', 'namespace')
        .requiredOption('-l, --selector <selector>', 'label selector')
        .option('--condition-type <type>', 'readiness gate condition type', 'kwave.dev/in-place-ready')
        .option('--dry-run', 'list the pods, change nothing'),
  );
  add(
    'sim',
    'run the simulated Kubernetes cluster (API server + kubelet) until SIGINT/SIGTERM',
    {},
    () => import('./commands/sim.js'),
    (c) =>
      c
        .option(
          '--control-plane <kind>',
          "embedded (the simulator's own API server and kubelet) or real (etcd, kube-apiserver, controller-manager and scheduler built by `npm run build:control-plane`, with kwave's kubelet as node agent)",
          'embedded',
        )
        .option(
          '--kubelet <kind>',
          "simulated (kwave's own kubelet model as node agent) or real (one real kubelet process per node, kubemark's hollow kubelet over kwave's image catalog; needs --control-plane real)",
          'simulated',
        )
        .option(
          '--kubernetes <minor>',
          'the Kubernetes release of --control-plane real, e.g. 1.33 (default KWAVE_KUBERNETES, else the newest `npm run build:control-plane` builds)',
        )
        .option(
          '--clusters <n>',
          'serve this many clusters (embedded only), each with its own API server, nodes and /sim/stats; the kubeconfig has contexts sim-1 … sim-N',
        )
        .option('--pods <n>', 'pods in the default world (per cluster)', '10')
        .option('--fixture <file>', 'fixture YAML describing nodes, images and workloads')
        .option('--port <port>', 'API server port (0 = any free port; with --clusters, cluster i gets PORT+i-1)', '0')
        .option(
          '--metrics-port <port>',
          'app metrics and /sim/stats port (0 = any free port; with --clusters, cluster i gets PORT+i-1)',
          '0',
        )
        .option('--kubeconfig-out <path>', 'write a kubeconfig for the simulated cluster here')
        .option('--faults <spec>', 'faults to switch on, e.g. "errorRate=0.1,latencyMs=50,watchCutSeconds=5"')
        .option('--time-scale <f>', 'multiply every simulated duration by this factor', '1')
        .option(
          '--jitter <share>',
          "random variation of the kubelet's step durations, 0 to below 1 (default: the fixture's, else 0.2; 0 = fixed timings)",
        ),
  );
  add(
    'demo',
    'start the simulated cluster and run plans/demo.yaml end to end',
    { metrics: true },
    () => import('./commands/demo.js'),
    (c) =>
      c
        .option('--keep', 'leave the simulated cluster running and print how to inspect it')
        .option('--gate', 'add a real Prometheus gate'),
  );
  return program;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  let result: Promise<number> | undefined;
  const program = buildProgram(io, (p) => (result = p));
  try {
    // A KubeError no command named its doing for still reads as a cluster problem, not a bug.
    return await wrapKube(async () => {
      await program.parseAsync(argv, { from: 'user' });
      return result ? await result : ExitCode.OK;
    }, 'talking to the cluster');
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return err.exitCode === 0 ? ExitCode.OK : ExitCode.BAD_INPUT;
    }
    if (err instanceof KwaveError) {
      io.stderr.write(renderError(err) + '\n');
      return err.exitCode;
    }
    io.stderr.write(
      `kwave: internal error (a bug, please report it): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return ExitCode.INTERNAL;
  }
}
