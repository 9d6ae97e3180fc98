/**
 * The error helpers of src/common, for the tool modules (which import only src/tools and src/common).
 *
 * @module
 */
export { assertNever, describeError } from "../common/errors.ts";
