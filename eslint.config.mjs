// ESLint for the whole tree (`npm run lint`, run by .ci/run). Syntax-level rules only, no type
// information: tsc (`npm run typecheck`) already checks types, and a type-aware lint costs minutes
// on a 2-core CI machine.
import comments from '@eslint-community/eslint-plugin-eslint-comments';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/', 'node_modules/', 'data/', 'coverage/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { '@eslint-community/eslint-comments': comments },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    rules: {
      // An `any` needs a disable comment that says why (`-- reason`).
      '@typescript-eslint/no-explicit-any': 'error',
      '@eslint-community/eslint-comments/require-description': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
      // Services log through the broker's logger (structured, with the node id); plain console
      // output is for the places listed below.
      'no-console': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'prefer-const': 'error',
    },
  },
  {
    // Where printing is the job: command-line scripts, benchmarks, the process entry point and its
    // shutdown, the embedded database's start-up lines (before any broker exists), and tests.
    files: ['bench/**', 'scripts/**', 'server.ts', 'runtime/**', 'test/**', 'shared/db/bootstrap.mjs'],
    rules: { 'no-console': 'off' },
  },
  {
    // CommonJS configuration files.
    files: ['**/*.js'],
    ignores: ['services/gateway/console/**', 'services/gateway/my/**'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The operator console and the subscriber's page run in the browser as ES modules.
    files: ['services/gateway/console/**/*.js', 'services/gateway/my/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
  },
);
