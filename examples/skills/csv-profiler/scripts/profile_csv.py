#!/usr/bin/env python3
"""Profile a CSV file and print the result as JSON.

Usage:
    python3 scripts/profile_csv.py PATH [--delimiter CHAR] [--max-distinct N]

Standard library only; never touches the network. The whole file is streamed
once, so memory use is bounded by the number of columns times --max-distinct.

Output (JSON object on stdout):
    file, delimiter, row_count, column_count, columns (list of header names),
    ragged_rows (rows whose field count differs from the header),
    profile (list, one object per column) with:
        name, null_count, non_null_count, distinct_count,
        distinct_capped (true when distinct_count stopped at --max-distinct),
        inferred_type ("empty", "integer", "float", "date", "boolean", "string"),
        numeric (min, max, mean) when every non-null value is a number,
        date_range (min, max) when every non-null value is a YYYY-MM-DD date,
        min_length, max_length (string lengths of non-null values),
        examples (up to 3 distinct non-null values).

--delimiter accepts one character, or "tab" for tab-separated files.

Exit status: 0 on success, 1 when the file cannot be read or parsed (a JSON
error object is printed on stderr), 2 on command-line usage errors.
"""

import argparse
import csv
import datetime
import json
import math
import re
import sys

NULL_TOKENS = {"", "na", "n/a", "null", "none", "nil", "nan", "-"}
TRUE_TOKENS = {"true", "false", "yes", "no", "t", "f", "y", "n"}
EXAMPLE_LIMIT = 3
ISO_DATE = re.compile(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


def is_iso_date(text):
    if not ISO_DATE.match(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def parse_number(text):
    """Return (kind, value) for integer or float text, or None."""
    candidate = text.strip()
    if not candidate:
        return None
    try:
        number = int(candidate)
    except ValueError:
        pass
    else:
        # Very long digit strings (IDs, card numbers) cannot be averaged as
        # floats; treat them as text.
        return ("integer", number) if abs(number) < 10 ** 300 else None
    try:
        value = float(candidate)
    except ValueError:
        return None
    if math.isnan(value) or math.isinf(value):
        return None
    return "float", value


class ColumnStats:
    def __init__(self, name, max_distinct):
        self.name = name
        self.max_distinct = max_distinct
        self.null_count = 0
        self.non_null_count = 0
        self.distinct = set()
        self.distinct_capped = False
        self.examples = []
        self.all_numeric = True
        self.any_float = False
        self.all_boolean = True
        self.all_dates = True
        self.date_min = None
        self.date_max = None
        self.num_min = None
        self.num_max = None
        self.num_sum = 0.0
        self.num_count = 0
        self.min_length = None
        self.max_length = None

    def add(self, raw):
        value = raw.strip()
        if value.lower() in NULL_TOKENS:
            self.null_count += 1
            return
        self.non_null_count += 1

        if value not in self.distinct:
            if len(self.distinct) < self.max_distinct:
                self.distinct.add(value)
                if len(self.examples) < EXAMPLE_LIMIT:
                    self.examples.append(value)
            else:
                self.distinct_capped = True

        length = len(value)
        if self.min_length is None or length < self.min_length:
            self.min_length = length
        if self.max_length is None or length > self.max_length:
            self.max_length = length

        if value.lower() not in TRUE_TOKENS:
            self.all_boolean = False

        if self.all_dates:
            if is_iso_date(value):
                if self.date_min is None or value < self.date_min:
                    self.date_min = value
                if self.date_max is None or value > self.date_max:
                    self.date_max = value
            else:
                self.all_dates = False

        if self.all_numeric:
            parsed = parse_number(value)
            if parsed is None:
                self.all_numeric = False
            else:
                kind, number = parsed
                if kind == "float":
                    self.any_float = True
                if self.num_min is None or number < self.num_min:
                    self.num_min = number
                if self.num_max is None or number > self.num_max:
                    self.num_max = number
                self.num_sum += number
                self.num_count += 1

    def inferred_type(self):
        if self.non_null_count == 0:
            return "empty"
        if self.all_numeric:
            return "float" if self.any_float else "integer"
        if self.all_dates:
            return "date"
        if self.all_boolean:
            return "boolean"
        return "string"

    def to_dict(self):
        result = {
            "name": self.name,
            "null_count": self.null_count,
            "non_null_count": self.non_null_count,
            "distinct_count": len(self.distinct),
            "distinct_capped": self.distinct_capped,
            "inferred_type": self.inferred_type(),
            "min_length": self.min_length,
            "max_length": self.max_length,
            "examples": self.examples,
        }
        if self.non_null_count and self.all_numeric:
            result["numeric"] = {
                "min": self.num_min,
                "max": self.num_max,
                "mean": round(self.num_sum / self.num_count, 6),
            }
        if self.non_null_count and self.all_dates:
            result["date_range"] = {"min": self.date_min, "max": self.date_max}
        return result


CANDIDATE_DELIMITERS = ",;\t|"


def detect_delimiter(sample):
    try:
        return csv.Sniffer().sniff(sample, delimiters=CANDIDATE_DELIMITERS).delimiter
    except csv.Error:
        pass
    # Sniffer gives up on ragged files; fall back to the most common
    # candidate character in the header line.
    first_line = sample.splitlines()[0] if sample else ""
    counts = [(first_line.count(char), char) for char in CANDIDATE_DELIMITERS]
    best_count, best_char = max(counts)
    return best_char if best_count > 0 else ","


def unique_names(header):
    """Give blank or repeated header cells stable, distinct names."""
    used = set()
    names = []
    for index, cell in enumerate(header):
        base = cell.strip() or "column_%d" % (index + 1)
        name = base
        suffix = 2
        while name in used:
            name = "%s_%d" % (base, suffix)
            suffix += 1
        used.add(name)
        names.append(name)
    return names


def profile(path, delimiter, max_distinct):
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        if delimiter is None:
            delimiter = detect_delimiter(handle.read(64 * 1024))
            handle.seek(0)
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            return {
                "file": path,
                "delimiter": delimiter,
                "row_count": 0,
                "column_count": 0,
                "columns": [],
                "ragged_rows": 0,
                "profile": [],
            }
        names = unique_names(header)
        stats = [ColumnStats(name, max_distinct) for name in names]
        row_count = 0
        ragged = 0
        for row in reader:
            if not row:
                continue  # csv module yields [] for blank lines
            row_count += 1
            if len(row) != len(names):
                ragged += 1
            for index, column in enumerate(stats):
                column.add(row[index] if index < len(row) else "")
    return {
        "file": path,
        "delimiter": delimiter,
        "row_count": row_count,
        "column_count": len(names),
        "columns": names,
        "ragged_rows": ragged,
        "profile": [column.to_dict() for column in stats],
    }


def main(argv):
    parser = argparse.ArgumentParser(description="Profile a CSV file as JSON.")
    parser.add_argument("path", help="CSV file to profile")
    parser.add_argument("--delimiter", help="field separator (default: sniffed)")
    parser.add_argument(
        "--max-distinct",
        type=int,
        default=1000,
        help="stop counting distinct values per column after N (default 1000)",
    )
    args = parser.parse_args(argv)
    if args.max_distinct < 1:
        parser.error("--max-distinct must be at least 1")
    if args.delimiter in ("tab", "\\t"):
        args.delimiter = "\t"
    if args.delimiter is not None and len(args.delimiter) != 1:
        parser.error("--delimiter must be a single character")

    csv.field_size_limit(16 * 1024 * 1024)
    try:
        result = profile(args.path, args.delimiter, args.max_distinct)
    except (OSError, csv.Error) as error:
        print(json.dumps({"error": str(error), "file": args.path}), file=sys.stderr)
        return 1
    json.dump(result, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
