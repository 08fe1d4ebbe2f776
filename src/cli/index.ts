import { Argument, Command, CommanderError, Option } from 'commander';
import { completionScript, SHELLS, type Shell } from './completion.ts';
import { campaignSend } from './commands/campaign.ts';
import * as account from './commands/account.ts';
import * as adminCmd from './commands/admin.ts';
import * as senderCmd from './commands/sender.ts';
import * as routing from './commands/routing.ts';
import * as windowCmd from './commands/window.ts';
import { login, logout } from './commands/login.ts';
import * as messages from './commands/messages.ts';
import { backup, restore } from './commands/backup.ts';
import { doctor, migrate } from './commands/ops.ts';
import { serve } from './commands/serve.ts';
import * as settings from './commands/settings.ts';
import { Context } from './context.ts';
import { CliError, EXIT, EXIT_HELP, type Io, OUTPUT_FORMATS, processIo } from './io.ts';
import { VERSION } from '../version.ts';

const CONNECTION_HELP = `Connection: TERN_URL (default http://localhost:8080) and TERN_API_KEY (a channel's key), TERN_ADMIN_KEY for
"tern admin"; or a profile written by "tern login" (~/.config/tern/profile.json, or TERN_PROFILE). The environment
wins over the profile. Every command takes --help; most take --json (machine-readable output on stdout).`;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The `tern` program; `ctx.exitCode` holds what a command that did not throw ends with. */
function program(ctx: Context, io: Io): Command {
  const root = new Command('tern')
    .description('Tern: a self-hostable messaging service (SMS, RCS, voice), and the command line of its REST API')
    .version(VERSION, '-V, --version', "print Tern's version")
    .option('--url <url>', 'Tern to talk to (default TERN_URL, the profile, http://localhost:8080)')
    .addOption(
      new Option('--output <format>', 'json (as --json), table (boxed) or tsv (tab-separated); default: table on a terminal, tsv when piped').choices(
        OUTPUT_FORMATS,
      ),
    )
    .addHelpText('after', `\n${CONNECTION_HELP}\n\n${EXIT_HELP}\n`)
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  root
    .command('serve')
    .description('start Tern: the HTTP API, the console (/console/) and the SMPP server, configured by TERN_* variables')
    .option(
      '--demo',
      'also create, on first start, a demo organisation with an SMS, an RCS and a VOICE channel and a key for each, and allow webhooks to private addresses',
    )
    .action((o) => serve(io, o));

  root
    .command('login')
    .description('check a key and keep it, with the URL, in the profile file (the key is read from standard input unless given)')
    .option('--url <url>', 'the Tern to sign in to')
    .option('--api-key <key>', "a channel's API key")
    .option('--admin', 'the key is the operator key (read from standard input)')
    .option('--admin-key <key>', 'the operator key')
    .action((o) => login(ctx, { ...o, url: o.url ?? root.opts().url }));
  root
    .command('logout')
    .description('remove the profile file')
    .action(() => logout(ctx));

  root
    .command('send')
    .description('send a message (SMS by default)')
    .argument('<number>', "recipient: 33612345678, +33 6 12 34 56 78, or national in the organisation's country")
    .argument('<text>', 'the text')
    .option('--rcs', "an RCS TEXT message (an RCS channel's key)")
    .option('--voice', "a text-to-speech call (a VOICE channel's key)")
    .option('--from <sender>', "sender ID (default: the channel's)")
    .option('--ref <refClient>', 'your reference, echoed in webhooks')
    .option('--at <date>', "send later: ISO 8601 (without an offset: the organisation's time zone)")
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
  const typeOption = () => new Option('--type <type>', "sms, rcs or voice (default: the key's channel type)");
  msgs
    .command('list')
    .description('messages, newest first (the last 10 days unless --since)')
    .addOption(typeOption())
    .option('--status <status>', 'SCHEDULED, ENROUTE, DELIVERED, UNDELIVERABLE, UNDELIVERED, READ, CANCELLED')
    .option('--direction <dir>', 'MT (sent, the default) or MO (received)')
    .option('--to <number>', 'recipient')
    .option('--ref <refClient>', 'your reference')
    .option('--campaign <id>', "a campaign's messages")
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
    .description('send one message a row of a CSV file (number[,text][,refClient]), as one campaign, waiting out rate limits; run it again to resume')
    .argument('<file>', 'CSV file, "," or ";" separated, with or without a header (number, text, refClient)')
    .option('--text <text>', 'the text of rows that have none')
    .option('--template <id>', "an SMS template of the channel: a header line, and each row's other columns are its variables' values by header")
    .option('--from <sender>', 'sender ID')
    .option('--at <date>', 'send later (ISO 8601)')
    .option('--rcs', "RCS TEXT messages (an RCS channel's key)")
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
  keys
    .command('list')
    .description('API keys, without their values')
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((o) => settings.keysList(ctx, o));
  keys
    .command('create')
    .description('a new API key (its value is shown once)')
    .argument('<name>', 'a name for it')
    .option('--role <role>', 'ADMIN, MANAGER, USER (default) or MESSAGE; repeat for several', collect)
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((name, o) => settings.keysCreate(ctx, name, o));
  keys
    .command('revoke')
    .description('revoke an API key')
    .argument('<id>', 'credential id')
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((id, o) => settings.keysRevoke(ctx, id, o));

  const webhooks = root.command('webhooks').description('webhook deliveries');
  webhooks
    .command('deliveries')
    .description('deliveries with their last answer, newest first')
    .option('--status <state>', 'PENDING, DELIVERED, FAILED, GONE or REFUSED')
    .option('--message <id>', "one message's deliveries")
    .option('--limit <n>', 'how many (default 20, at most 100)')
    .option('--json', 'JSON, with every attempt')
    .action((o) => settings.deliveries(ctx, o));
  webhooks
    .command('replay')
    .description('send a delivery again now')
    .argument('<id>', 'delivery id')
    .option('--json', 'JSON')
    .action((id, o) => settings.replay(ctx, id, o));

  const smpp = root.command('smpp').description("the channel's SMPP access (an ADMIN key of an SMS channel)");
  const creds = smpp.command('credentials').description('SMPP credentials');
  creds
    .command('list')
    .description('credentials, without passwords')
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((o) => settings.smppList(ctx, o));
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
  creds
    .command('delete')
    .description('delete a credential')
    .argument('<id>', 'SMPP credential id')
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((id, o) => settings.smppDelete(ctx, id, o));
  smpp
    .command('sessions')
    .description('sessions bound now (on the node that answers)')
    .addOption(channelOption())
    .option('--json', 'JSON')
    .action((o) => settings.smppSessions(ctx, o));

  const admin = root.command('admin').description("the operator's commands (TERN_ADMIN_KEY)");
  const orgs = admin.command('organisations').description('organisations');
  orgs
    .command('list')
    .description('every organisation')
    .option('--page <n>', 'page of 100')
    .option('--json', 'JSON')
    .action((o) => adminCmd.organisations(ctx, o));
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
  admin
    .command('channels')
    .description("an organisation's channels")
    .argument('<organisationId>')
    .option('--json', 'JSON')
    .action((id, o) => adminCmd.channels(ctx, id, o));
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
  admin
    .command('credit')
    .description("top up an organisation's balance")
    .argument('<organisationId>')
    .argument('<amount>', 'euros')
    .option('--reference <text>')
    .option('--json', 'JSON')
    .action((id, amount, o) => adminCmd.credit(ctx, id, amount, o));
  admin
    .command('erase-number')
    .description("erase a phone number's data in an organisation (texts, contacts, opt-out details) and show what was done")
    .argument('<organisationId>')
    .argument('<msisdn>')
    .option('--drop-opt-out', 'delete its opt-out too (by default it stays, so it is still honoured)')
    .option('--json', 'JSON')
    .action((id, msisdn, o) => adminCmd.eraseNumber(ctx, id, msisdn, o));
  admin
    .command('export-number')
    .description('write, as JSON, what an organisation keeps about a phone number')
    .argument('<organisationId>')
    .argument('<msisdn>')
    .action((id, msisdn) => adminCmd.exportNumber(ctx, id, msisdn));
  const prices = admin.command('prices').description('the price list');
  prices
    .command('list')
    .description('every price')
    .option('--json', 'JSON')
    .action((o) => adminCmd.prices(ctx, o));
  prices
    .command('set')
    .description('set one price (euros a unit)')
    .argument('<type>', 'SMS, RCS, VOICE or LOOKUP')
    .argument('<country>', 'ISO country code, or * for any other')
    .argument('<amount>', 'euros a unit')
    .option('--kind <kind>', 'RCS: BASIC, SINGLE or CONVERSATION')
    .option('--json', 'JSON')
    .action((type, country, amount, o) => adminCmd.priceSet(ctx, type, country, amount, o));
  const window = admin.command('window').description("an organisation's marketing sending window");
  window
    .command('show')
    .description('its hours, holidays and ramp')
    .argument('<organisationId>')
    .option('--json', 'JSON')
    .action((id, o) => windowCmd.windowShow(ctx, id, o));
  window
    .command('set')
    .description('change it (the parts given replace the current ones; it is switched on unless --off)')
    .argument('<organisationId>')
    .option('--day <spec>', 'a weekday or a range and its hours: monday=08:00-20:00, mon-sat=08:00-20:00, sunday=closed; repeat', collect)
    .option('--calendar <name>', "computed public holidays: FR (France's) or NONE")
    .option('--holiday <YYYY-MM-DD>', 'one more day without sending (replaces the list); repeat', collect)
    .option('--ramp <n>', 'deferred messages leave at this many a second per channel')
    .option('--channel <channelId>', 'a non-marketing channel that opts in (replaces the list); repeat', collect)
    .option('--off', 'hold nothing')
    .option('--json', 'JSON')
    .action((id, o) => windowCmd.windowSet(ctx, id, o));
  window
    .command('reset')
    .description("back to its country's default")
    .argument('<organisationId>')
    .option('--json', 'JSON')
    .action((id, o) => windowCmd.windowReset(ctx, id, o));
  const sender = admin.command('sender').description("an organisation's sender registry: what it may send from, and where");
  sender
    .command('list')
    .description('its senders, their countries and status')
    .argument('<organisationId>')
    .option('--json', 'JSON')
    .action((id, o) => senderCmd.senderList(ctx, id, o));
  sender
    .command('add')
    .description('register a sender (PENDING unless --approved)')
    .argument('<organisationId>')
    .argument('<sender>', 'up to 11 letters and digits, a short code or a number')
    .option('--country <codes>', 'ISO countries it may send to (FR or FR,BE; repeat); none: every country', collect)
    .option('--approved', 'approved at once')
    .option('--json', 'JSON')
    .action((id, value, o) => senderCmd.senderAdd(ctx, id, value, o));
  sender
    .command('approve')
    .description('approve a sender (by its id or its value)')
    .argument('<organisationId>')
    .argument('<sender>', 'its id, or the sender itself')
    .option('--country <codes>', 'the countries it holds for (replaces them; repeat)', collect)
    .option('--json', 'JSON')
    .action((id, value, o) => senderCmd.senderApprove(ctx, id, value, o));
  sender
    .command('reject')
    .description('reject a sender: sends from it are refused')
    .argument('<organisationId>')
    .argument('<sender>', 'its id, or the sender itself')
    .option('--json', 'JSON')
    .action((id, value, o) => senderCmd.senderReject(ctx, id, value, o));
  sender
    .command('remove')
    .description("drop a sender from the registry (then only channels' sender lists decide)")
    .argument('<organisationId>')
    .argument('<sender>', 'its id, or the sender itself')
    .option('--json', 'JSON')
    .action((id, value, o) => senderCmd.senderRemove(ctx, id, value, o));
  const connectors = admin.command('connectors').description('operator connections: list (the default), create, set, remove');
  connectors
    .command('list', { isDefault: true })
    .description('operator connections with their live health')
    .option('--json', 'JSON')
    .action((o) => adminCmd.connectors(ctx, o));
  const settingOption = () =>
    new Option('--set <key=value>', 'a setting of the type (host=…, port=2775, tps=50; JSON values read as JSON); repeat').argParser(collect);
  connectors
    .command('create')
    .description('a new operator connection (see docs/connectors.md for the settings of each type)')
    .argument('<name>', 'lowercase letters, digits, - and _; never changed')
    .argument('<type>', 'SIMULATOR, SMPP, SMSMODE_HTTP, SIP, RBM or a lookup type')
    .addOption(settingOption())
    .option('--disable', 'create it switched off')
    .option('--json', 'JSON')
    .action((name, type, o) => routing.connectorCreate(ctx, name, type, o));
  connectors
    .command('set')
    .description('change settings of a connection (it restarts with them)')
    .argument('<connector>', 'its name or id')
    .addOption(settingOption())
    .option('--unset <key>', 'remove a setting; repeat', collect)
    .option('--enable', 'switch it on')
    .option('--disable', 'switch it off')
    .option('--json', 'JSON')
    .action((ref, o) => routing.connectorSet(ctx, ref, o));
  connectors
    .command('remove')
    .description('remove a connection no route uses')
    .argument('<connector>', 'its name or id')
    .option('--json', 'JSON')
    .action((ref, o) => routing.connectorRemove(ctx, ref, o));
  const routes = admin.command('routes').description('routes');
  routes
    .command('list')
    .description('every route')
    .option('--json', 'JSON')
    .action((o) => adminCmd.routes(ctx, o));
  const routeOptions = (cmd: Command) =>
    cmd
      .option('--connector <name[=weight]>', 'a connector of the route, drawn by weight; repeat (replaces the list)', collect)
      .option('--failover <name>', 'a connector tried, in order, when none of them can take a message; repeat (replaces the list)', collect)
      .option('--priority <n>', 'lower is tried first (default 100)')
      .option('--prefix <digits>', 'match: numbers starting with these digits')
      .option('--country <iso>', 'match: numbers of this country')
      .option('--mcc-mnc <code>', 'match: numbers of this network')
      .option('--type <type>', 'match: SMS, RCS, VOICE or LOOKUP')
      .option('--flow <flow>', 'match: TRANSACTIONAL, MARKETING or OTP')
      .option('--organisation <id>', "match: this organisation's messages")
      .option('--channel <id>', "match: this channel's messages")
      .option('--cost-per-part <euros>', 'what the operator charges a part')
      .option('--lookup-before-send', 'look each number up live before sending')
      .option('--enable', 'switch it on')
      .option('--disable', 'switch it off')
      .option('--json', 'JSON');
  routeOptions(routes.command('create').description('a new route (the match options given make its match)').argument('<name>', 'its name')).action((name, o) =>
    routing.routeCreate(ctx, name, o),
  );
  routeOptions(
    routes
      .command('set')
      .description('change a route (the match options given replace its whole match)')
      .argument('<route>', 'its name or id')
      .option('--name <name>', 'a new name'),
  ).action((ref, o) => routing.routeSet(ctx, ref, o));
  routes
    .command('remove')
    .description('remove a route')
    .argument('<route>', 'its name or id')
    .option('--json', 'JSON')
    .action((ref, o) => routing.routeRemove(ctx, ref, o));
  routes
    .command('test')
    .description('which route and connector would take a message, and why')
    .argument('<number>')
    .option('--type <type>')
    .option('--json', 'JSON')
    .action((n, o) => adminCmd.routeTest(ctx, n, o));

  root
    .command('completion')
    .description('print the shell completion script: tern completion bash > /etc/bash_completion.d/tern (zsh, fish: see the script’s first line)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .action((shell: Shell) => {
      io.stdout.write(completionScript(root, shell));
    });

  root
    .command('migrate')
    .description('apply the database migrations of TERN_DATABASE_URL (tern serve applies them too)')
    .option('--status', 'only list the applied migrations (with when) and the pending ones; exit 9 when some are pending')
    .option('--json', 'JSON')
    .action((o) => migrate(io, o));
  root
    .command('backup')
    .description('copy the SQLite database of TERN_DATABASE_URL to FILE while Tern serves (consistent, checked); on PostgreSQL, print the pg_dump command')
    .argument('<file>', 'the backup file to write (not replaced unless --force)')
    .option('--with-key', 'also write the secret key beside it, as FILE.secret.key (readable by its owner only)')
    .option('--force', 'replace FILE (and FILE.secret.key) if it exists')
    .option('--json', 'JSON')
    .addHelpText('after', '\nExits 5 when FILE exists (without --force), 4 when the database is not there, 2 on PostgreSQL.')
    .action((file, o) => backup(io, file, o));
  root
    .command('restore')
    .description('put a backup back as the SQLite database of TERN_DATABASE_URL, which must not exist yet; on PostgreSQL, print the pg_restore command')
    .argument('<file>', 'a backup made by tern backup')
    .option('--key <keyfile>', 'the secret key file to put beside the database (default: FILE.secret.key when it exists)')
    .option('--json', 'JSON')
    .addHelpText('after', "\nExits 5 when the database (or its -wal, -shm) exists, 1 when FILE is not a whole database of Tern's, 2 on PostgreSQL.")
    .action((file, o) => restore(io, file, o));
  root
    .command('doctor')
    .description('check the configuration, database, PostgreSQL, ports, text-to-speech (espeak-ng) and console, and say what to fix')
    .option('--json', 'JSON')
    .action((o) => doctor(io, o));
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
    const output = root?.opts().output as (typeof OUTPUT_FORMATS)[number] | undefined;
    if (output === 'json') {
      if (!action.options.some((opt) => opt.attributeName() === 'json')) throw new CliError(`--output json: ${action.name()} has no JSON output`, EXIT.USAGE);
      action.setOptionValue('json', true);
    } else if (output !== undefined) io.tables = output;
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
