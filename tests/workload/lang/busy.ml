(* The language matrix's OCaml program: the standard library's List.sort,
   Hashtbl and Printf, and functions of its own with operators' names
   (mangled with `$xx` escapes), until the process has used SECONDS of CPU
   time (however busy the machine). OCaml 4.x keeps no frame pointers.
   Build: ocamlopt -g busy.ml -o busy *)

let ( +++ ) a b = (a * 31) + b

let rec checksum acc = function
  | [] -> acc
  | x :: rest -> checksum (acc +++ x) rest

let work round =
  let l = List.init 20000 (fun i -> (i * 7919 + round) mod 10007) in
  let sorted = List.sort compare l in
  let h = Hashtbl.create 1024 in
  List.iter (fun x -> Hashtbl.replace h (Printf.sprintf "k%d" (x mod 512)) x) sorted;
  checksum (Hashtbl.length h) sorted

let () =
  let seconds = float_of_string Sys.argv.(1) in
  let acc = ref 0 and round = ref 0 in
  while Sys.time () < seconds do
    acc := !acc lxor work !round;
    incr round
  done;
  Printf.printf "%d\n" (!acc land 1)
