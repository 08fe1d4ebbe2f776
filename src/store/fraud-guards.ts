import type { Db } from './db.ts';
import type { OrganisationFraudGuardTable } from './schema.ts';

/** Organisations' own fraud guards: destination countries and velocity limits, as JSON lists (null: the defaults). */

export type FraudGuardRow = OrganisationFraudGuardTable;

export async function findFraudGuards(db: Db, organisationId: string): Promise<FraudGuardRow | null> {
  return (await db.selectFrom('organisation_fraud_guards').selectAll().where('organisation_id', '=', organisationId).executeTakeFirst()) ?? null;
}

export async function saveFraudGuards(db: Db, row: FraudGuardRow): Promise<void> {
  await db
    .insertInto('organisation_fraud_guards')
    .values(row)
    .onConflict((oc) =>
      oc.column('organisation_id').doUpdateSet({
        allowed_countries: row.allowed_countries,
        velocity_limits: row.velocity_limits,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}
