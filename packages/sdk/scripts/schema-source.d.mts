/** The text of src/schema.d.ts from Tern's OpenAPI document (parsed), by openapi-typescript. */
export function schemaSource(document: unknown): Promise<string>;
