import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** A self-signed certificate for `name` (an EC P-256 key) and its key, written as PEM files in `dir`: their paths. */
export function selfSignedCertificate(dir: string, name = 'localhost', files = { cert: 'cert.pem', key: 'key.pem' }, days = 1): { cert: string; key: string } {
  const cert = join(dir, files.cert);
  const key = join(dir, files.key);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      String(days),
      '-subj',
      `/CN=${name}`,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}
