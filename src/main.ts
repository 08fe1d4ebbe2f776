import { createApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createOutput } from './log-format.ts';
import { startupAnnouncements } from './startup-report.ts';

const USAGE = `usage: tern serve [--demo]

  serve     start the HTTP API (and the SMPP server) with the configuration from TERN_* variables
  --demo    also create, on first start, a demo organisation with an SMS, an RCS and a VOICE channel
            and a key for each, and allow webhooks to private addresses (local receivers)`;

async function serve(args: string[]): Promise<void> {
  const demo = args.includes('--demo');
  const env = { ...process.env };
  if (demo && env.TERN_WEBHOOK_ALLOW_PRIVATE === undefined) env.TERN_WEBHOOK_ALLOW_PRIVATE = 'true';
  const config = loadConfig(env);
  const output = createOutput(config);
  const app = await createApp(config, { demo, logger: output.logger });
  const log = app.logger;
  if (demo && config.webhookAllowPrivate) {
    log.warn('demo profile: webhooks to private and loopback addresses are allowed (TERN_WEBHOOK_ALLOW_PRIVATE=true)');
  }
  const { httpPort, httpsPort } = await app.start();
  const base = config.publicUrl ?? `http://localhost:${httpPort}`;
  const https = httpsPort === undefined ? '' : ` and https://localhost:${httpsPort}`;
  log.info({ httpPort, ...(httpsPort !== undefined && { httpsPort }), database: app.store.dialect }, `Tern listening on ${base}${https} (API docs: ${base}/docs)`);
  const facts = { base, adminKey: app.adminKey, adminKeyConfigured: config.adminKey !== null, demo: app.demo };
  for (const a of startupAnnouncements(facts)) output.announce(a.msg, a.fields, a.lines);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping: draining work in flight');
    try {
      await app.stop();
      log.info('stopped');
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'error while stopping');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === 'serve' || command === undefined) return serve(args);
  if (command === '--help' || command === 'help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  process.stderr.write(`unknown command "${command}"\n${USAGE}\n`);
  process.exit(2);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`tern: ${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`tern: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
