// Plan texts the plan tests share, byte for byte: their revisions and error positions are pinned.

/** Everything up to `strategy`: one container of pods `app: web` in namespace web. */
export const PLAN_HEAD = `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
spec:
  target:
    namespace: web
    selector: { matchLabels: { app: web } }
  update:
    containers: [{ name: nginx, image: "nginx:1.25.3" }]
`;

/** PLAN_HEAD with three waves: the smallest plan most tests start from. */
export const MINIMAL_PLAN = `${PLAN_HEAD}  strategy:
    waves: [1, "10%", "100%"]
`;
