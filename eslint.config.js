import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'var/**', 'charts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
      // A package is used through the entry points its package.json `exports` declares, never
      // through its build output or sources: those are its own business (docs/architecture.md).
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@vtl/[^/]+/(dist|src)(/|$)',
              message:
                "Import the package's declared entry point (its package.json `exports`), not its files.",
            },
            {
              regex: '^(\\.\\./)+[a-z-]+/(dist|src)/',
              message: "Another package's files: import its declared entry point (@vtl/<name>) instead.",
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read JSON bodies of the API as a user would: untyped.
    files: ['**/*.test.ts', 'e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
