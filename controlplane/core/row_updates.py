"""Write the same fields of many rows, each its own values, in one statement.

Django's bulk_update builds `CASE WHEN pk = 1 THEN ... WHEN pk = 2 THEN ...` for every field
of every row: its expressions are built and resolved in Python row by row, and PostgreSQL
reads a statement as long as the rows. A reconcile sweep writes the cost of each running job
of a page this way at every sweep (5 s), and for a page of 500 jobs that statement took most
of the cost's share of the sweep (bench.reconcile_sweep). On PostgreSQL the rows go instead as
one array a field, joined to the table by primary key:

    UPDATE t SET a = v.a, b = v.b FROM unnest(%s::bigint[], %s::int[], %s::text[])
        AS v(pk, a, b) WHERE t.pk = v.pk

a few parameters whatever the number of rows. Other databases (SQLite for the demo) use
bulk_update.

Rows are locked in primary key order before any is written (`in_key_order`). Two statements
that write overlapping rows each lock them in the order their plan meets them (a hash join's,
or the heap's, where every update moves a row): a reconcile sweep writing a page's restart
scans and the log store writing the same jobs' progress deadlocked that way with 10,000
running jobs (bench.scale). In one order, one waits for the other instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connections, models, router


def update_fields(objs: Iterable[models.Model], fields: Sequence[str]) -> int:
    """Write FIELDS of each saved instance in OBJS (all of one model, each once) as they are
    on it; how many rows were written. The fields must be concrete, not the primary key."""
    rows = list(objs)
    if not rows or not fields:
        return 0
    model = type(rows[0])
    meta = model._meta
    database = router.db_for_write(model)
    connection = connections[database]
    if connection.vendor != "postgresql":
        return model._base_manager.using(database).bulk_update(rows, fields)
    keys = [row.pk for row in rows]
    if None in keys or len(set(keys)) != len(keys):
        # PostgreSQL would write a row named twice from either of its values.
        raise ValueError("each instance must be saved and given once")
    targets = [meta.get_field(name) for name in fields]
    if any(not field.concrete or field.primary_key or field.many_to_many
           for field in targets):
        raise ValueError(f"only concrete non-key fields can be written: {list(fields)}")
    key = meta.pk
    columns = [key, *targets]
    names = ["pk"] + [f"v{i}" for i in range(len(targets))]
    quote = connection.ops.quote_name
    arrays = ", ".join(f"%s::{field.db_type(connection)}[]" for field in columns)
    assignments = ", ".join(f"{quote(field.column)} = v.{name}"
                            for field, name in zip(targets, names[1:], strict=True))
    table = quote(meta.db_table)
    sql = (f"UPDATE {table} SET {assignments} FROM unnest({arrays}) AS v({', '.join(names)}) "
           f"WHERE {table}.{quote(key.column)} = v.pk AND "
           f"{in_key_order(connection, meta.db_table, key.column, key.db_type(connection))}")
    params = [[field.get_db_prep_save(getattr(row, field.attname), connection)
               for row in rows] for field in columns]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, params[0]])
        return cursor.rowcount


def update_each(model: type[models.Model], keys: Iterable[Any], **values: Any) -> int:
    """`model.objects.filter(pk__in=keys).update(**values)`, its rows locked in key order on
    PostgreSQL (see the module's note); how many rows were written."""
    keys = sorted(set(keys))
    if not keys:
        return 0
    database = router.db_for_write(model)
    connection = connections[database]
    manager = model._base_manager.using(database)
    if connection.vendor != "postgresql":
        return manager.filter(pk__in=keys).update(**values)
    meta = model._meta
    quote = connection.ops.quote_name
    fields = [meta.get_field(name) for name in values]
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    key = meta.pk
    which = in_key_order(connection, meta.db_table, key.column, key.db_type(connection))
    sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {which}"
    params = [field.get_db_prep_save(value, connection)
              for field, value in zip(fields, values.values(), strict=True)]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, [key.get_db_prep_save(k, connection) for k in keys]])
        return cursor.rowcount


def in_key_order(connection: Any, table: str, key: str, key_type: str) -> str:
    """A PostgreSQL condition, `key IN (...)` of an UPDATE or DELETE of TABLE, that locks the
    rows whose keys are in its one parameter (an array) in key order before the statement
    writes any of them: a sorted subquery's row locks are taken as its rows come out in order.
    FOR NO KEY UPDATE is the lock an UPDATE of non-key columns takes itself, so it blocks
    nothing the statement would not (a foreign key's check takes a weaker one)."""
    quote = connection.ops.quote_name
    table, key = quote(table), quote(key)
    return (f"{table}.{key} IN (SELECT {key} FROM {table} WHERE {key} = ANY(%s::{key_type}[]) "
            f"ORDER BY {key} FOR NO KEY UPDATE)")
