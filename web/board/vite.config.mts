import { defineConfig } from 'vite';

/**
 * Builds the board into dist/ (index.html and hashed assets/), which the API serves at /board.
 * Everything is bundled: no CDN, nothing inline (the page runs under `default-src 'self'`).
 */
export default defineConfig({
  base: '/board/',
  // Without Vite's `production` condition, @pos/shared resolves to its TypeScript sources (its
  // `default` export), which are bundled; its `production` build is CommonJS for Node.
  resolve: { conditions: ['module', 'browser'] },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // no data: URLs, which the policy refuses
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
