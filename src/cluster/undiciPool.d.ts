// undici's Pool module on its own (see wireConnection.ts's import): undici's own Pool, class and type.
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export default Pool;
}
