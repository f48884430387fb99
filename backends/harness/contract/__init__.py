"""The contract between the harness (which writes results) and the report tools (which
read them). Torch-free and dependency-free on purpose: the report tools import this
package and nothing else of the harness, and the harness imports nothing of the tools.
One module per format:

- `statuses`: the ordered `Status` vocabulary, its groups, the stages and the status a
  stage's failure gives.
- `record`: the typed `SubtestRecord` (which `Subtest`, its `Findings`, what the harness
  made of them) with its payloads (`OutputStatistics` per output,
  `RerunResult`) and the trimming of its error text.
- `nodeids`: a test's case and parameter ids from its node id, and its repro command.
- `facts`: the session facts (`SessionFacts`, `FlowFacts`, `RunFacts`), the schema
  version and the seed policies.
- `report`: where facts and records sit in a pytest-json-report file (the one accessor),
  and the shapes of its test entries.
- `shapes`: the shapes of JSON values a reader accepts (`check`): what makes each reader
  of a file from elsewhere a checked one.
- `stream`: the results stream's lines (`X.partial.jsonl`) and how to read them.
- `durations`: `backends/<name>/durations.json`.

Modules of this repository import the module that defines a name. The names are also
importable from the package itself (`from etsuite.backends.harness.contract import
Status`), for a vendor's own plugins and tests.
"""

from etsuite.backends.harness.contract.durations import (  # noqa: F401
    DURATIONS_FILE,
    DURATIONS_VERSION,
    durations_document,
    durations_of,
)
from etsuite.backends.harness.contract.facts import (  # noqa: F401
    FACTS_SHAPE,
    SCHEMA_VERSION,
    SEED_POLICIES,
    FactsError,
    FlowFacts,
    RunFacts,
    SessionFacts,
)
from etsuite.backends.harness.contract.nodeids import (  # noqa: F401
    REPRO_COMMAND_REPORT,
    case_id,
    param_ids,
    repro_command,
    test_case_id,
)
from etsuite.backends.harness.contract.record import (  # noqa: F401
    CAUSE_SEPARATOR,
    ERROR_LIMIT,
    FINDINGS_FIELDS,
    RECORD_FIELDS,
    RECORD_SHAPES,
    Findings,
    OutputStatistics,
    RecordError,
    RerunResult,
    Subtest,
    SubtestRecord,
    computing_ops,
    delegation_share,
    error_headline,
    is_quantize_bookkeeping,
    trim_error,
    where_it_breaks,
)
from etsuite.backends.harness.contract.report import (  # noqa: F401
    PHASE_SHAPE,
    REPORT_KEY,
    REPORT_SHAPE,
    REPORT_SUFFIX,
    TEST_SHAPE,
    facts_of_report,
    put_facts,
    put_records,
    records_of_test,
)
from etsuite.backends.harness.contract.shapes import (  # noqa: F401
    ANYTHING,
    BOOLEAN,
    FINITE,
    INTEGER,
    NUMBER,
    OBJECT,
    TEXT,
    Fields,
    ListOf,
    MapOf,
    Maybe,
    Scalar,
    ShapeError,
    check,
    describe,
    surely_holds,
    walk,
)
from etsuite.backends.harness.contract.statuses import (  # noqa: F401
    FAILING,
    ORDER,
    OUT_OF_RULE,
    PASSING,
    SKIPPING,
    STAGE_FAILURE,
    STAGES,
    TEST_ONLY,
    Status,
)
from etsuite.backends.harness.contract.stream import (  # noqa: F401
    REPORT_LINE_SHAPE,
    STREAM_COLLECT_ERROR,
    STREAM_FINISHED,
    STREAM_HEADER,
    STREAM_REPORT,
    STREAM_START,
    STREAM_SUFFIX,
    ended_tests,
    facts_of_header,
    header_of,
    outcome_of_phases,
    phase_category,
    records_of_phases,
    stream_entries,
    stream_header,
    stream_path_for,
    test_ended,
)
