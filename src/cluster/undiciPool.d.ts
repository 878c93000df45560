// undici's Pool module on its own (see wire.ts's import): its class, typed as undici's own.
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}
