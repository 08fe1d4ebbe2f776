import { main } from './cli/index.ts';

// `tern`: serve, and the commands of the REST API (src/cli/).
await main(process.argv.slice(2));
