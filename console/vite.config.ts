import { defineConfig } from 'vite';

// Preact through esbuild's automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The CSP forbids inline script: keep the module preload helper in the bundle, not the page.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
});
