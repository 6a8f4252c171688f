%% The language matrix's Erlang program: BEAM's JIT (OTP 24+) running
%% fib/1 until the node has used SECONDS of CPU time (however busy the
%% machine). With +JPperf true the JIT writes /tmp/perf-PID.map, whose
%% names start with `$` ($busy:fib/1), and a jitdump, and keeps frame
%% pointers. Build: erlc busy.erl
%% Run: erl +JPperf true -noshell -pa DIR -run busy main SECONDS
-module(busy).
-export([main/1, fib/1]).

fib(0) -> 0;
fib(1) -> 1;
fib(N) -> fib(N - 1) + fib(N - 2).

loop(Until, Acc) ->
    {Used, _} = erlang:statistics(runtime),
    case Used >= Until of
        true -> Acc;
        false -> loop(Until, Acc + fib(20))
    end.

main([Seconds]) ->
    Until = round(list_to_float(Seconds) * 1000),
    io:format("~p~n", [loop(Until, 0) band 1]),
    halt().
