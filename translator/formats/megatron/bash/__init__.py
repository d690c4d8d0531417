"""A static reader of the bash that Megatron launch scripts are written in: tokens (lexer.py,
scanner.py), the script's tree (parser.py, nodes.py), word expansion on what the script itself sets
(expand.py, braced.py, values.py, arith.py), tests (conditions.py), control flow (control.py), strings
read as shell (strings.py) and the launch line inside wrappers (launch.py); script.py reads a script.
Nothing is ever run and the environment is never read."""
