import type { Migration } from 'kysely';
import * as tenancy from './001-tenancy.ts';
import * as messaging from './002-messaging.ts';
import * as transfers from './003-transfers.ts';

/** Applied in key order; never rename or edit a migration that has shipped, add a new one. */
export const migrations: Record<string, Migration> = {
  '001-tenancy': tenancy,
  '002-messaging': messaging,
  '003-transfers': transfers,
};
