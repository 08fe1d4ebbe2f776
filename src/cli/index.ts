import { Command, CommanderError, Option } from 'commander';
import { campaignSend } from './commands/campaign.ts';
import * as account from './commands/account.ts';
import * as adminCmd from './commands/admin.ts';
import { login, logout } from './commands/login.ts';
import * as messages from './commands/messages.ts';
import { doctor, migrate } from './commands/ops.ts';
import { serve } from './commands/serve.ts';
import * as settings from './commands/settings.ts';
import { Context } from './context.ts';
import { CliError, EXIT, EXIT_HELP, type Io, processIo } from './io.ts';

const CONNECTION_HELP = `Connection: TERN_URL (default http://localhost:8080) and TERN_API_KEY (a channel's key), TERN_ADMIN_KEY for
"tern admin"; or a profile written by "tern login" (~/.config/tern/profile.json, or TERN_PROFILE). The environment
wins over the profile. Every command takes --help; most take --json (machine-readable output on stdout).`;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The `tern` program; `ctx.exitCode` holds what a command that did not throw ends with. */
function program(ctx: Context, io: Io): Command {
  const root = new Command('tern')
    .description('Tern: a self-hostable messaging service (SMS, RCS, voice), and the command line of its REST API')
    .option('--url <url>', 'Tern to talk to (default TERN_URL, the profile, http://localhost:8080)')
    .addHelpText('after', `\n${CONNECTION_HELP}\n\n${EXIT_HELP}\n`)
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  root
    .command('serve')
    .description('start Tern: the HTTP API, the console (/console/) and the SMPP server, configured by TERN_* variables')
    .option('--demo', 'also create, on first start, a demo organisation with an SMS, an RCS and a VOICE channel and a key for each, and allow webhooks to private addresses')
    .action((o) => serve(io, o));

  root
    .command('login')
    .description('check a key and keep it, with the URL, in the profile file (the key is read from standard input unless given)')
    .option('--url <url>', 'the Tern to sign in to')
    .option('--api-key <key>', "a channel's API key")
    .option('--admin', 'the key is the operator key (read from standard input)')
    .option('--admin-key <key>', 'the operator key')
    .action((o) => login(ctx, { ...o, url: o.url ?? root.opts().url }));
  root.command('logout').description('remove the profile file').action(() => logout(ctx));

  root
    .command('send')
    .description('send a message (SMS by default)')
    .argument('<number>', 'recipient: 33612345678, +33 6 12 34 56 78, or national in the organisation\'s country')
    .argument('<text>', 'the text')
    .option('--rcs', 'an RCS TEXT message (an RCS channel\'s key)')
    .option('--voice', 'a text-to-speech call (a VOICE channel\'s key)')
    .option('--from <sender>', 'sender ID (default: the channel\'s)')
    .option('--ref <refClient>', 'your reference, echoed in webhooks')
    .option('--at <date>', 'send later: ISO 8601 (without an offset: the organisation\'s time zone)')
    .option('--unicode', 'SMS: force UCS-2')
    .option('--stop', 'SMS: add the STOP opt-out mention')
    .option('--title <title>', 'voice: spoken before the text')
    .option('--language <lang>', 'voice: fr-FR, en-GB, de-DE or es-ES')
    .option('--fallback <text>', 'RCS: the SMS sent when the recipient cannot receive RCS')
    .option('--callback <url>', 'callbackUrlStatus of this message')
    .option('--idempotency-key <key>', 'makes a retried send safe (default: a new one each time)')
    .option('--wait', 'follow the message until its status is final (exit 7 unless DELIVERED or READ)')
    .option('--timeout <seconds>', 'with --wait: give up after this long (default 120)')
    .option('--json', 'print the message object')
    .action((number, text, o) => messages.send(ctx, number, text, o));

  const msgs = root.command('messages').description('list, read and follow messages');
  const typeOption = () => new Option('--type <type>', 'sms, rcs or voice (default: the key\'s channel type)');
  msgs
    .command('list')
    .description('messages, newest first (the last 10 days unless --since)')
    .addOption(typeOption())
    .option('--status <status>', 'SCHEDULED, ENROUTE, DELIVERED, UNDELIVERABLE, UNDELIVERED, READ, CANCELLED')
    .option('--direction <dir>', 'MT (sent, the default) or MO (received)')
    .option('--to <number>', 'recipient')
    .option('--ref <refClient>', 'your reference')
    .option('--campaign <id>', 'a campaign\'s messages')
    .option('--since <date>', 'ISO 8601')
    .option('--until <date>', 'ISO 8601')
    .option('--limit <n>', 'how many (default 20)')
    .option('--json', 'print message objects')
    .action((o) => messages.list(ctx, o));
  msgs
    .command('get')
    .description('one message with its status timeline')
    .argument('<id>', 'message id')
    .addOption(typeOption())
    .option('--json', 'print the message object with its events')
    .action((id, o) => messages.getOne(ctx, id, o));
  msgs
    .command('tail')
    .description('follow new messages and status changes live (Ctrl-C to stop)')
    .addOption(new Option('--type <type>', 'only sms, rcs or voice messages'))
    .option('--max <n>', 'stop after this many events')
    .option('--json', 'one JSON event a line')
    .action((o) => messages.tail(ctx, o));

  const campaign = root.command('campaign').description('campaigns');
  campaign
    .command('send')
    .description('send one message a row of a CSV file (number[,text][,refClient]), as one campaign; run it again to resume')
    .argument('<file>', 'CSV file, "," or ";" separated, with or without a header (number, text, refClient)')
    .option('--text <text>', 'the text of rows that have none')
    .option('--from <sender>', 'sender ID')
    .option('--at <date>', 'send later (ISO 8601)')
    .option('--rcs', 'RCS TEXT messages (an RCS channel\'s key)')
    .option('--concurrency <n>', 'requests at once (default 8)')
    .option('--json', 'print the summary as JSON')
    .action((file, o) => campaignSend(ctx, file, o));

  root
    .command('lookup')
    .description('look numbers up (charged at the LOOKUP price)')
    .argument('[numbers...]', 'phone numbers')
    .option('--file <file>', 'numbers in the first column of a file (bulk, with a progress bar)')
    .option('--json', 'print the lookup objects')
    .action((numbers, o) => account.lookup(ctx, numbers, o));

  root
    .command('consumption')
    .description('what was spent, per period')
    .option('--by <period>', 'day or month (default month)')
    .option('--type <type>', 'sms, rcs, voice or lookup (default sms)')
    .option('--from <day>', 'YYYY-MM-DD (default: 30 days or 12 months ago)')
    .option('--to <day>', 'YYYY-MM-DD (default today)')
    .option('--chart', 'a bar chart rather than a table')
    .option('--json', 'print the consumption records')
    .action((o) => account.consumption(ctx, o));

  root
    .command('balance')
    .description("the organisation's balance and latest ledger entries")
    .option('--ledger <n>', 'ledger entries to show (default 10, 0 for none)')
    .option('--json', 'print the organisation and ledger')
    .action((o) => account.balance(ctx, o));

  root
    .command('transfer')
    .description('move funds to a sub-organisation (--to) or back from one (--from); an ADMIN key')
    .argument('<amount>', 'euros, e.g. 12.5')
    .option('--to <organisationId>', 'the sub-organisation that receives')
    .option('--from <organisationId>', 'the sub-organisation that gives back')
    .option('--reference <text>', 'your reference')
    .option('--idempotency-key <key>', 'makes a retried transfer safe')
    .option('--json', 'print the transfer')
    .action((amount, o) => account.transfer(ctx, amount, o));

  const keys = root.command('keys').description("the channel's API keys (an ADMIN key)");
  const channelOption = () => new Option('--channel <id>', "another channel of the organisation (default: the key's)");
  keys.command('list').description('API keys, without their values').addOption(channelOption()).option('--json', 'JSON').action((o) => settings.keysList(ctx, o));
  keys
    .command('create')
    .description('a new API key (its value is shown once)')
    .argument('<name>', 'a name for it')
    .option('--role <role>', 'ADMIN, MANAGER, USER (default) or MESSAGE; repeat for several', collect)
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((name, o) => settings.keysCreate(ctx, name, o));
  keys.command('revoke').description('revoke an API key').argument('<id>', 'credential id').addOption(channelOption()).option('--json', 'JSON').action((id, o) => settings.keysRevoke(ctx, id, o));

  const webhooks = root.command('webhooks').description('webhook deliveries');
  webhooks
    .command('deliveries')
    .description('deliveries with their last answer, newest first')
    .option('--status <state>', 'PENDING, DELIVERED, FAILED, GONE or REFUSED')
    .option('--message <id>', "one message's deliveries")
    .option('--limit <n>', 'how many (default 20, at most 100)')
    .option('--json', 'JSON, with every attempt')
    .action((o) => settings.deliveries(ctx, o));
  webhooks.command('replay').description('send a delivery again now').argument('<id>', 'delivery id').option('--json', 'JSON').action((id, o) => settings.replay(ctx, id, o));

  const smpp = root.command('smpp').description("the channel's SMPP access (an ADMIN key of an SMS channel)");
  const creds = smpp.command('credentials').description('SMPP credentials');
  creds.command('list').description('credentials, without passwords').addOption(channelOption()).option('--json', 'JSON').action((o) => settings.smppList(ctx, o));
  creds
    .command('create')
    .description('a new system_id and password')
    .argument('<systemId>', 'at most 15 characters, unique')
    .option('--password <password>', 'at most 8 characters')
    .option('--allowed-ip <cidr>', 'an address or CIDR range binds may come from; repeat for several', collect)
    .option('--max-binds <n>', 'sessions at once (default 10)')
    .option('--tps <n>', 'submits a second (default: no limit)')
    .option('--window <n>', "deliver_sm a session sends before waiting for their responses (default: the server's)")
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((systemId, o) => settings.smppCreate(ctx, systemId, o));
  creds.command('delete').description('delete a credential').argument('<id>', 'SMPP credential id').addOption(channelOption()).option('--json', 'JSON').action((id, o) => settings.smppDelete(ctx, id, o));
  smpp.command('sessions').description('sessions bound now (on the node that answers)').addOption(channelOption()).option('--json', 'JSON').action((o) => settings.smppSessions(ctx, o));

  const admin = root.command('admin').description('the operator\'s commands (TERN_ADMIN_KEY)');
  const orgs = admin.command('organisations').description('organisations');
  orgs.command('list').description('every organisation').option('--page <n>', 'page of 100').option('--json', 'JSON').action((o) => adminCmd.organisations(ctx, o));
  orgs
    .command('create')
    .description('a new organisation, with a first channel and its ADMIN key when --channel is given')
    .argument('<name>', 'its name')
    .option('--country <iso>', 'default country of national numbers, e.g. FR')
    .option('--time-zone <tz>', 'IANA time zone (default Europe/Paris)')
    .option('--parent <organisationId>', 'make it a sub-organisation')
    .option('--channel <type>', 'sms, rcs or voice: also create a channel and a key')
    .option('--json', 'JSON')
    .action((name, o) => adminCmd.organisationCreate(ctx, name, o));
  admin.command('channels').description("an organisation's channels").argument('<organisationId>').option('--json', 'JSON').action((id, o) => adminCmd.channels(ctx, id, o));
  admin
    .command('keys')
    .description('API keys as the operator')
    .command('create')
    .description('a new API key on any channel (the way to replace a lost one)')
    .argument('<channelId>')
    .option('--name <name>', 'a name for it')
    .option('--role <role>', 'ADMIN (default), MANAGER, USER or MESSAGE; repeat for several', collect)
    .option('--json', 'JSON')
    .action((id, o) => adminCmd.adminKeyCreate(ctx, id, o));
  admin.command('credit').description("top up an organisation's balance").argument('<organisationId>').argument('<amount>', 'euros').option('--reference <text>').option('--json', 'JSON').action((id, amount, o) => adminCmd.credit(ctx, id, amount, o));
  const prices = admin.command('prices').description('the price list');
  prices.command('list').description('every price').option('--json', 'JSON').action((o) => adminCmd.prices(ctx, o));
  prices
    .command('set')
    .description('set one price (euros a unit)')
    .argument('<type>', 'SMS, RCS, VOICE or LOOKUP')
    .argument('<country>', 'ISO country code, or * for any other')
    .argument('<amount>', 'euros a unit')
    .option('--kind <kind>', 'RCS: BASIC, SINGLE or CONVERSATION')
    .option('--json', 'JSON')
    .action((type, country, amount, o) => adminCmd.priceSet(ctx, type, country, amount, o));
  admin.command('connectors').description('operator connections with their live health').option('--json', 'JSON').action((o) => adminCmd.connectors(ctx, o));
  const routes = admin.command('routes').description('routes');
  routes.command('list').description('every route').option('--json', 'JSON').action((o) => adminCmd.routes(ctx, o));
  routes.command('test').description('which route and connector would take a message, and why').argument('<number>').option('--type <type>').option('--json', 'JSON').action((n, o) => adminCmd.routeTest(ctx, n, o));

  root.command('migrate').description('apply the database migrations of TERN_DATABASE_URL (tern serve applies them too)').option('--json', 'JSON').action((o) => migrate(io, o));
  root.command('doctor').description('check the configuration, database, PostgreSQL, ports, text-to-speech (espeak-ng) and console, and say what to fix').option('--json', 'JSON').action((o) => doctor(io, o));
  return root;
}

/** Runs `tern` with `argv` (without node and the script); resolves with the exit code, or 'serving' for serve. */
export async function run(argv: string[], io: Io = processIo()): Promise<number | 'serving'> {
  let root: Command | null = null;
  const ctx = new Context(io, () => root?.opts().url as string | undefined);
  root = program(ctx, io);
  let serving = false;
  root.hook('preAction', (_root, action) => {
    if (action.name() === 'serve') serving = true;
  });
  try {
    // `tern` alone serves, as it always has.
    await root.parseAsync(argv.length === 0 ? ['serve'] : argv, { from: 'user' });
    return serving ? 'serving' : ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') return EXIT.OK;
      return EXIT.USAGE;
    }
    if (err instanceof CliError) {
      io.stderr.write(`tern: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr.write(`tern: ${(err as Error).stack ?? String(err)}\n`);
    return EXIT.FAILED;
  }
}

export async function main(argv: string[]): Promise<void> {
  const code = await run(argv);
  if (code !== 'serving') process.exit(code);
}
