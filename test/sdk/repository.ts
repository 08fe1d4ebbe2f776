// Where the SDK's workspace lies, from a test file run as TypeScript (test/sdk/) or compiled (.test-build/test/sdk/).
import { fileURLToPath } from 'node:url';

export const REPOSITORY = fileURLToPath(new URL(import.meta.url.includes('/.test-build/') ? '../../../' : '../../', import.meta.url));
export const SDK = `${REPOSITORY}packages/sdk/`;
