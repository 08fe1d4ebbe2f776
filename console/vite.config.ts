import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is served by Tern under /console/ (src/doors/console/routes.ts), from console/dist.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 400,
  },
});
