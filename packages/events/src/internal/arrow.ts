import { Bool, Field, Float64, Int32, Int64, List, Schema, TimestampMillisecond, Utf8 } from "apache-arrow";
import { COLUMNS, type Column } from "./columns.js";

/** The Arrow schema of a column list (default: the canonical record; timestamps as milliseconds, UTC). */
export function arrowSchema(columns: readonly Column[] = COLUMNS): Schema {
  return new Schema(
    columns.map((col) => {
      const t =
        col.type === "varchar" ? new Utf8()
        : col.type === "timestamp" ? new TimestampMillisecond("UTC")
        : col.type === "boolean" ? new Bool()
        : col.type === "integer" ? new Int32()
        : col.type === "bigint" ? new Int64()
        : col.type === "double" ? new Float64()
        : new List(new Field("item", new Utf8(), true));
      return new Field(col.name, t, col.nullable);
    }),
  );
}
